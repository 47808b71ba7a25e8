// Tenancy: which projects a caller may see. A user sees the projects they belong to; an API key
// (or a span token) only its own, while its owner belongs to it; nobody sees a project being deleted. Records of
// other projects do not exist for the caller (not found), and references to them are refused
// exactly as references to records that do not exist ("Invalid pk"): existence never leaks.
import type { ProjectGates } from './actors/project-gates.ts';
import { boundProject, type Principal } from './auth/authenticate.ts';
import type { Agent } from './domain/records.ts';
import { invalid, invalidPk, notFound } from './domain/rejection.ts';
import type { ReadModel } from './read-model.ts';

export class Tenancy {
  constructor(private readonly readModel: ReadModel, private readonly gates: ProjectGates) {}

  visibleProjects(principal: Principal): string[] {
    const userId = principal.user.id;
    const bound = boundProject(principal);
    const candidates = bound !== null ? [bound] : this.readModel.projectsOf(userId);
    return [...candidates].filter((project) => this.readModel.isMember(userId, project) && !this.gates.isClosed(project));
  }

  canSee(principal: Principal, project: string): boolean {
    const bound = boundProject(principal);
    if (bound !== null && bound !== project) return false;
    return this.readModel.isMember(principal.user.id, project) && !this.gates.isClosed(project);
  }

  /** A record whose project the caller can see, or not found. */
  seen<T>(principal: Principal, record: T | undefined, projectOf: (record: T) => string): T {
    if (!record || !this.canSee(principal, projectOf(record))) throw notFound();
    return record;
  }

  /** A record a body's `field` references, when the caller can see it; else "Invalid pk". */
  referenced<T>(principal: Principal, field: string, id: string, record: T | undefined, projectOf: (record: T) => string): T {
    if (!record || !this.canSee(principal, projectOf(record))) throw invalid({ [field]: [invalidPk(id)] });
    return record;
  }

  /** The project a body's `project` names, when the caller can see it. */
  referencedProject(principal: Principal, id: string): string {
    return this.referenced(principal, 'project', id, this.readModel.projects.get(id), (project) => project.id).id;
  }

  /** The live agent a body's `agent` names, when the caller can see it (deleted agents leave the read model). */
  referencedAgent(principal: Principal, id: string): Agent {
    return this.referenced(principal, 'agent', id, this.readModel.agents.get(id), (agent) => agent.project);
  }
}
