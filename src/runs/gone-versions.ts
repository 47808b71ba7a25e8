// A run cannot go on without its dataset version or its agent: deleting either fails the run, in a
// commit of the run's job after the agent's. The delete answers once that commit has settled, so a
// run reads `failed` as soon as the delete has answered; and runs a stop between the two commits
// left live are failed at the next start.
import type { Logger } from 'pino';
import type { Registry } from '../actors/registry.ts';
import { timestamp, type Clock } from '../clock.ts';
import type { AgentEvent } from '../domain/agent.ts';
import { isEnded } from '../domain/run.ts';
import type { ReadModel } from '../read-model.ts';

export interface GoneVersionsOptions {
  registry: Registry;
  readModel: ReadModel;
  clock: Clock;
  logger: Logger;
}

export class GoneVersions {
  /** The asks failing runs, until each settles. */
  private readonly failing = new Set<Promise<void>>();

  constructor(private readonly options: GoneVersionsOptions) {}

  /** After an agent's commit: fails the live runs of the versions it deleted (or of its agent, deleted). */
  followAgent(events: readonly AgentEvent[]): void {
    const { readModel } = this.options;
    const datasets = new Set<string>();
    for (const event of events) {
      if (event.type === 'DatasetDeleted') datasets.add(event.dataset.id);
      if (event.type === 'AgentUpdated' && event.agent.is_deleted) {
        for (const dataset of readModel.datasets.values()) if (dataset.agent === event.agent.id) datasets.add(dataset.id);
        for (const run of readModel.runs.values()) if (readModel.jobs.get(run.job)?.agent === event.agent.id) datasets.add(run.dataset);
      }
    }
    if (datasets.size > 0) this.failRunsOf((dataset) => datasets.has(dataset));
  }

  /** At start: fails the live runs whose version or agent is gone (deleted just before a stop). */
  sweep(): void {
    const { readModel } = this.options;
    this.failRunsOf((dataset) => {
      const agent = readModel.datasets.get(dataset)?.agent;
      return agent === undefined || readModel.agents.get(agent) === undefined;
    });
  }

  /** Resolves once every run being failed so far has been (a delete answers after this). */
  async settled(): Promise<void> {
    await Promise.all(this.failing);
  }

  private failRunsOf(isGone: (dataset: string) => boolean): void {
    const { registry, readModel, clock, logger } = this.options;
    const byJob = new Map<string, { project: string; runs: string[] }>();
    for (const run of readModel.runs.values()) {
      if (isEnded(run) || !isGone(run.dataset)) continue;
      const entry = byJob.get(run.job) ?? { project: run.project, runs: [] };
      entry.runs.push(run.id);
      byJob.set(run.job, entry);
    }
    for (const [job, { project, runs }] of byJob) {
      const failed: Promise<void> = registry
        .ask(registry.actor('job', job), [project], { type: 'FailRuns', runs, now: timestamp(clock) })
        .then(
          () => undefined,
          (error: unknown) => logger.warn({ err: error, job }, 'a run whose dataset version went could not be failed'),
        )
        .finally(() => this.failing.delete(failed));
      this.failing.add(failed);
    }
  }
}
