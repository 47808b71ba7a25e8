// A project, its memberships and its workers: one stream per project.
import type { Decider } from './decider.ts';
import { projectDefaults, type Json, type Membership, type Project, type Timestamp, type User, type Uuid } from './records.ts';
import { forbidden, invalid, notFound } from './rejection.ts';

export interface ProjectState {
  project: Project | null;
  memberships: Map<string, Membership>;
  membershipIdsByUser: Map<number, string>;
  /** The workers registered to run its runs' tasks. */
  workers: Map<string, Worker>;
  gone: boolean;
}

/** A process that leases a project's tasks, runs them and completes them (any language, HTTP only). */
export interface Worker {
  readonly id: Uuid;
  readonly project: Uuid;
  readonly name: string;
  readonly host: string;
  readonly metadata: Json;
  /** Who registered it (a user id): the worker acts with that user's or API key's credentials. */
  readonly registered_by: number | null;
  readonly created_at: Timestamp;
}

export type ProjectChanges = Partial<Pick<Project, 'name' | 'slug' | 'description' | 'is_active' | 'settings'>>;

/**
 * A new project: an omitted description reads "", an omitted is_active its model's default
 * (`projectDefaults`), omitted settings null; an explicit null stays null.
 */
export function newProject(identity: { id: Uuid; now: Timestamp; name: string; slug: string }, fields: ProjectChanges = {}): Project {
  return {
    id: identity.id,
    created_at: identity.now,
    updated_at: identity.now,
    name: identity.name,
    slug: identity.slug,
    description: fields.description === undefined ? '' : fields.description,
    is_active: fields.is_active === undefined ? projectDefaults.is_active : fields.is_active,
    settings: fields.settings ?? null,
  };
}

/** `user`'s membership of `project`, as of `now`. */
export function newMembership(identity: { id: Uuid; project: Uuid; now: Timestamp }, user: User): Membership {
  const { id, project, now } = identity;
  return { id, project, user: user.id, user_email: user.email, created_at: now, updated_at: now };
}

export type ProjectCommand =
  | { type: 'CreateProject'; project: Project; creator: Membership }
  | { type: 'UpdateProject'; changes: ProjectChanges; now: Timestamp }
  | { type: 'DeleteProject' }
  | { type: 'AddMember'; membership: Membership }
  | { type: 'RemoveMember'; id: string; requestedBy: number }
  | { type: 'RegisterWorker'; worker: Worker }
  | { type: 'RemoveWorker'; id: string };

export type ProjectEvent =
  | { type: 'ProjectCreated'; project: Project }
  | { type: 'ProjectUpdated'; project: Project }
  | { type: 'ProjectDeleted'; project: Project }
  | { type: 'MembershipAdded'; membership: Membership }
  | { type: 'MembershipRemoved'; membership: Membership }
  | { type: 'WorkerRegistered'; worker: Worker }
  | { type: 'WorkerRemoved'; worker: Worker };

/** The configured limits a project's decisions read. */
export interface ProjectLimits {
  membershipsPerProjectMax: number;
  workersPerProjectMax: number;
}

export const projectDecider: Decider<ProjectState, ProjectCommand, ProjectEvent, ProjectLimits> = {
  initialState: () => ({ project: null, memberships: new Map(), membershipIdsByUser: new Map(), workers: new Map(), gone: false }),

  decide(state, command, limits) {
    if (command.type === 'CreateProject') {
      if (state.project || state.gone) throw new Error('a project stream is created once');
      return [
        { type: 'ProjectCreated', project: command.project },
        { type: 'MembershipAdded', membership: command.creator },
      ];
    }
    const project = state.project;
    if (!project) throw notFound();
    switch (command.type) {
      case 'UpdateProject':
        return [{ type: 'ProjectUpdated', project: { ...project, ...command.changes, updated_at: command.now } }];
      case 'DeleteProject':
        return [{ type: 'ProjectDeleted', project }];
      case 'AddMember': {
        if (state.membershipIdsByUser.has(command.membership.user)) return [];
        if (state.memberships.size >= limits.membershipsPerProjectMax) {
          throw invalid({ non_field_errors: [`A project may have at most ${limits.membershipsPerProjectMax} members.`] });
        }
        return [{ type: 'MembershipAdded', membership: command.membership }];
      }
      case 'RemoveMember': {
        const membership = state.memberships.get(command.id);
        if (!membership) throw notFound();
        if (membership.user === command.requestedBy) {
          throw forbidden('You cannot remove yourself from a project.');
        }
        return [{ type: 'MembershipRemoved', membership }];
      }
      case 'RegisterWorker':
        if (state.workers.size >= limits.workersPerProjectMax) {
          throw invalid({ non_field_errors: [`A project may have at most ${limits.workersPerProjectMax} workers registered; remove one (DELETE /api/workers/{id}/) first.`] });
        }
        return [{ type: 'WorkerRegistered', worker: { ...command.worker, project: project.id } }];
      case 'RemoveWorker': {
        const worker = state.workers.get(command.id);
        if (!worker) throw notFound();
        return [{ type: 'WorkerRemoved', worker }];
      }
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'ProjectCreated':
      case 'ProjectUpdated':
        state.project = event.project;
        break;
      case 'ProjectDeleted':
        state.project = null;
        state.gone = true;
        break;
      case 'MembershipAdded':
        state.memberships.set(event.membership.id, event.membership);
        state.membershipIdsByUser.set(event.membership.user, event.membership.id);
        break;
      case 'MembershipRemoved':
        state.memberships.delete(event.membership.id);
        state.membershipIdsByUser.delete(event.membership.user);
        break;
      case 'WorkerRegistered':
        state.workers.set(event.worker.id, event.worker);
        break;
      case 'WorkerRemoved':
        state.workers.delete(event.worker.id);
        break;
    }
    return state;
  },

  isGone: (state) => state.gone,
};
