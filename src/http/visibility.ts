// Tenancy: which projects a caller may see. Records of other projects answer 404 and references
// to them 400 "Invalid pk", exactly as for records that do not exist.
import type { Principal } from '../auth/authenticate.ts';
import type { Agent } from '../domain/records.ts';
import { invalid, invalidPk } from '../domain/rejection.ts';
import type { Uses } from './deps.ts';

/** What tenancy reads: memberships, and which projects are being deleted. */
type Tenancy = Uses<'readModel' | 'registry'>;
import { fail } from './errors.ts';

export function visibleProjects(deps: Tenancy, principal: Principal): string[] {
  const { readModel, registry } = deps;
  const userId = principal.user.id;
  const candidates = principal.apiKey ? [principal.apiKey.project] : readModel.projectsOf(userId);
  return [...candidates].filter((project) => readModel.isMember(userId, project) && !registry.gates.isClosed(project));
}

export function canSee(deps: Tenancy, principal: Principal, project: string): boolean {
  if (principal.apiKey && principal.apiKey.project !== project) return false;
  return deps.readModel.isMember(principal.user.id, project) && !deps.registry.gates.isClosed(project);
}

/** A record's project must be visible, or the record does not exist for this caller. */
export function seenOr404<T>(deps: Tenancy, principal: Principal, record: T | undefined, projectOf: (record: T) => string): T {
  if (!record || !canSee(deps, principal, projectOf(record))) throw fail.notFound();
  return record;
}

/** A reference in a body must name a visible record, or it is "Invalid pk". */
export function referenceOr400<T>(
  deps: Tenancy,
  principal: Principal,
  field: string,
  id: string,
  record: T | undefined,
  projectOf: (record: T) => string,
): T {
  if (!record || !canSee(deps, principal, projectOf(record))) throw invalid({ [field]: [invalidPk(id)] });
  return record;
}

/** The project a body's `project` names, when the caller can see it. */
export function projectReference(deps: Tenancy, principal: Principal, id: string): string {
  return referenceOr400(deps, principal, 'project', id, deps.readModel.projects.get(id), (project) => project.id).id;
}

/** The live agent a body's `agent` names, when the caller can see it (deleted agents leave the read model). */
export function agentReference(deps: Tenancy, principal: Principal, id: string): Agent {
  return referenceOr400(deps, principal, 'agent', id, deps.readModel.agents.get(id), (agent) => agent.project);
}
