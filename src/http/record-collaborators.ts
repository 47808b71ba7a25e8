// What the routes of a resource its actors write take by name (agents, datasets, iterations,
// jobs, projects); each resource's routes add the few others they need.
import type { Registry } from '../actors/registry.ts';
import type { Clock } from '../clock.ts';
import type { ReadModel } from '../read-model.ts';
import type { Tenancy } from '../tenancy.ts';
import type { Lists } from './pages.ts';

/**
 * What the routes of a resource its actors write use: the actors, the read model, who may see
 * what, its list and the time. Each resource adds the few others it needs.
 */
export interface RecordCollaborators {
  registry: Registry;
  readModel: ReadModel;
  tenancy: Tenancy;
  lists: Lists;
  clock: Clock;
}
