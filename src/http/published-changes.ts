// Committed changes as the event stream publishes them: each record's JSON exactly as the REST
// API answers it (list-item form for agents, jobs and datasets; the full iteration and project),
// `{"id"}` for a deletion, and the project, agent and job it concerns for the stream's filters.
// The texts come from the same JSON cache as the REST answers, so a record is rendered once.
import type { Change } from '../events/changes.ts';
import type { Published } from '../events/change-feed.ts';
import type { JsonCache } from '../json-cache.ts';
import type { JobIteration } from '../domain/records.ts';
import type { ReadModel } from '../read-model.ts';
import type { Written } from '../results/result-writer.ts';
import {
  agentListItemJson, datasetListItemJson, iterationJson, jobListItemJson, jobLiveFields, projectJson, resultsWrittenEventJson, runJson, withLiveFields,
} from './representations.ts';

const idJson = (id: string) => `{"id":${JSON.stringify(id)}}`;

/** Renders changes once their write is applied to the read model (a job shows its agent's current name). */
export function publishedChanges(changes: readonly Change[], readModel: ReadModel, cache: JsonCache): Published[] {
  const published: Published[] = [];
  for (const change of changes) {
    const rendered = render(change, readModel, cache);
    if (rendered) published.push(rendered);
  }
  return published;
}

function render(change: Change, readModel: ReadModel, cache: JsonCache): Published | null {
  const { type } = change;
  switch (type) {
    case 'project.created':
    case 'project.updated':
      return { type, project: change.project.id, agent: null, job: null, audience: null, data: cache.text(change.project, projectJson) };
    case 'project.deleted':
      return { type, project: change.project.id, agent: null, job: null, audience: change.members, data: idJson(change.project.id) };
    case 'agent.created':
    case 'agent.updated':
    case 'agent.deleted': {
      const { agent } = change;
      const data = type === 'agent.deleted' ? idJson(agent.id) : cache.text(agent, agentListItemJson);
      return { type, project: agent.project, agent: agent.id, job: null, audience: null, data };
    }
    case 'dataset.created':
    case 'dataset.deleted': {
      const { dataset } = change;
      const data = type === 'dataset.deleted' ? idJson(dataset.id) : cache.text(dataset, datasetListItemJson);
      return { type, project: dataset.project, agent: dataset.agent, job: null, audience: null, data };
    }
    case 'dataset.activated': {
      const dataset = readModel.datasets.get(change.datasetId);
      if (!dataset) return null; // deleted by a later write of the same commit
      return { type, project: dataset.project, agent: dataset.agent, job: null, audience: null, data: cache.text(dataset, datasetListItemJson) };
    }
    case 'job.created':
    case 'job.updated':
    case 'job.deleted': {
      const { job } = change;
      const data = type === 'job.deleted'
        ? idJson(job.id)
        : withLiveFields(cache.text(job, jobListItemJson), jobLiveFields(readModel.agentLabel(job.agent)));
      return { type, project: job.project, agent: job.agent, job: job.id, audience: null, data };
    }
    case 'run.created':
    case 'run.finished': {
      const state = readModel.runStates.get(change.run.id);
      if (!state) return null; // its job was deleted by a later write of the same commit
      const agent = readModel.jobs.get(change.run.job)?.agent ?? null;
      return { type, project: change.run.project, agent, job: change.run.job, audience: null, data: JSON.stringify(runJson(state)) };
    }
    case 'race.decided': {
      const state = readModel.runStates.get(change.run);
      if (!state?.race) return null;
      const { run, race } = state;
      const agent = readModel.jobs.get(run.job)?.agent ?? null;
      const data = { run: run.id, job: run.job, ...change.candidate, datapoints: race.settings.datapoints, tasks_saved: race.tasksSaved };
      return { type, project: run.project, agent, job: run.job, audience: null, data: JSON.stringify(data) };
    }
    case 'iteration.created':
    case 'iteration.updated':
    case 'iteration.deleted': {
      const { iteration } = change;
      const data = type === 'iteration.deleted' ? idJson(iteration.id) : cache.text(iteration, iterationJson);
      const agent = readModel.jobs.get(iteration.job)?.agent ?? null;
      return { type, project: iteration.project, agent, job: iteration.job, audience: null, data };
    }
  }
}

/** A durable batch of results, as `results.written` announces it: the batch's answer, with its iteration, job and project. */
export function publishedResults(iteration: JobIteration, written: Written, readModel: ReadModel): Published {
  const agent = readModel.jobs.get(iteration.job)?.agent ?? null;
  const data = JSON.stringify(resultsWrittenEventJson(iteration, written));
  return { type: 'results.written', project: iteration.project, agent, job: iteration.job, audience: null, data };
}
