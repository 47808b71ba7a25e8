// Tenancy as the routes ask it (src/tenancy.ts decides): records of other projects answer 404 and
// references to them 400 "Invalid pk", exactly as for records that do not exist.
import type { Principal } from '../auth/authenticate.ts';
import type { Agent } from '../domain/records.ts';
import type { Uses } from './deps.ts';

type Tenancy = Uses<'tenancy' | 'readModel'>;

export function visibleProjects(deps: Tenancy, principal: Principal): string[] {
  return deps.tenancy.visibleProjects(principal);
}

export function canSee(deps: Tenancy, principal: Principal, project: string): boolean {
  return deps.tenancy.canSee(principal, project);
}

/** A record's project must be visible, or the record does not exist for this caller. */
export function seenOr404<T>(deps: Tenancy, principal: Principal, record: T | undefined, projectOf: (record: T) => string): T {
  return deps.tenancy.seen(principal, record, projectOf);
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
  return deps.tenancy.referenced(principal, field, id, record, projectOf);
}

/** The project a body's `project` names, when the caller can see it. */
export function projectReference(deps: Tenancy, principal: Principal, id: string): string {
  return referenceOr400(deps, principal, 'project', id, deps.readModel.projects.get(id), (project) => project.id).id;
}

/** The live agent a body's `agent` names, when the caller can see it (deleted agents leave the read model). */
export function agentReference(deps: Tenancy, principal: Principal, id: string): Agent {
  return referenceOr400(deps, principal, 'agent', id, deps.readModel.agents.get(id), (agent) => agent.project);
}
