// Scoring on the server: a run with `scoring` has its results' score, passed and dimensions
// computed here from the output, the datapoint's expected output and (for the spec's tool usage)
// the tool calls of the result's trace, when a completion is written and when a run is rescored.
// Each run's scorer is made once and made again only when its scoring or its agent changes.
import { evalSpecOf } from '../domain/agent.ts';
import type { Agent } from '../domain/records.ts';
import type { Run } from '../domain/run.ts';
import type { ReadModel } from '../read-model.ts';
import { runScorerOf, scoredFieldsError, type RunScorer, type RunScoring as Scoring, type ScoredFields } from '../scoring/run-scorer.ts';
import type { ScorerDeps } from '../scoring/scorers.ts';
import { toolCallsOf, type SpanLike } from '../scoring/tool-calls.ts';
import type { ToolCall } from '../scoring/tool-usage.ts';
import { shownDetail } from '../traces/span-record.ts';
import type { SpanStore } from '../traces/span-store.ts';
import { compileUserSchema } from '../validation/validator.ts';

export interface RunScoringOptions {
  readModel: ReadModel;
  spans: SpanStore;
}

/**
 * The agent's eval spec or output_schema as it is now gives the run no scorer: they were checked
 * when the run was made, and changed since (an output_schema that no longer compiles, say, or the
 * job's agent taken away). Its ok results cannot be scored until the agent is mended; made once
 * per change, as a scorer is.
 */
export class ScorerUnusable extends Error {
  constructor(reason: string) {
    super(`This run's scoring cannot be made from its agent as it is now (changed since the run began): ${reason}`);
    this.name = 'ScorerUnusable';
  }
}

/** A result the run's scoring gave figures a result row cannot hold (beyond ±1e100). */
export class ScoreOutOfBounds extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'ScoreOutOfBounds';
  }
}

interface Made {
  agent: Agent;
  scoring: Scoring;
  scorer: RunScorer | ScorerUnusable;
}

export class RunScoring {
  private readonly made = new Map<string, Made>();
  private readonly toolCallsThisTurn = new Map<string, ToolCall[] | null>();

  constructor(private readonly options: RunScoringOptions) {}

  /** What a scorer of this agent needs: the schema compiler and its output_schema. */
  static depsOf(agent: Agent): ScorerDeps {
    return { compileSchema: compileUserSchema, outputSchema: agent.output_schema ?? undefined };
  }

  /**
   * The run's scorer; null when its workers report their own scores (a run without `scoring`);
   * ScorerUnusable when its job's agent, changed since the run began, gives none, or when the job
   * has no agent now: a run that names a scoring is scored by the service or not at all, so its
   * workers (told so with each task) never have their own scores asked for.
   */
  scorerOf(run: Run): RunScorer | ScorerUnusable | null {
    const scoring = run.scoring;
    if (scoring === null) return null;
    const agent = this.agentOf(run);
    if (!agent) return new ScorerUnusable('its job has no agent now (give the job its agent again).');
    const made = this.made.get(run.id);
    if (made && made.agent === agent && made.scoring === scoring) return made.scorer;
    // Records are replaced, never changed in place: a new agent object is a changed eval spec.
    let scorer: RunScorer | ScorerUnusable;
    try {
      scorer = runScorerOf(scoring, evalSpecOf(agent), RunScoring.depsOf(agent));
    } catch (error) {
      scorer = new ScorerUnusable(error instanceof Error ? error.message : String(error));
    }
    this.made.set(run.id, { agent, scoring, scorer });
    return scorer;
  }

  /**
   * The fields the service writes for an ok result of the run at a datapoint of its version, or
   * ScoreOutOfBounds when they would not fit a result row.
   */
  score(run: Run, scorer: RunScorer, datapoint: number, output: unknown, traceId: string | null): ScoredFields | ScoreOutOfBounds {
    const expected = this.options.readModel.datasets.get(run.dataset)?.datapoints[datapoint]?.expected_output ?? null;
    const toolCalls = scorer.readsToolCalls ? this.toolCallsOf(run.project, traceId) : null;
    const scored = scorer.score(output, expected, toolCalls);
    const beyond = scoredFieldsError(scored);
    return beyond === null ? scored : new ScoreOutOfBounds(beyond);
  }

  forget(run: string): void {
    this.made.delete(run);
  }

  private agentOf(run: Run): Agent | undefined {
    const job = this.options.readModel.jobs.get(run.job);
    return job?.agent ? this.options.readModel.agents.get(job.agent) : undefined;
  }

  /**
   * The tool calls of a trace's spans in the run's project, in start order; null without a trace
   * or its spans. Read once a turn: a completion's items are scored in one turn, and items naming
   * one trace of many spans read it again each (items x spans work); a later turn reads spans
   * that came since.
   */
  private toolCallsOf(project: string, traceId: string | null): ToolCall[] | null {
    if (traceId === null) return null;
    const key = `${project}\n${traceId}`;
    if (this.toolCallsThisTurn.has(key)) return this.toolCallsThisTurn.get(key)!;
    if (this.toolCallsThisTurn.size === 0) queueMicrotask(() => this.toolCallsThisTurn.clear());
    const calls = this.readToolCalls(project, traceId);
    this.toolCallsThisTurn.set(key, calls);
    return calls;
  }

  private readToolCalls(project: string, traceId: string): ToolCall[] | null {
    const spans: (SpanLike & { start: string })[] = [];
    for (const span of this.options.spans.spansOfTrace(traceId)) {
      if (span.project !== project) continue;
      const { attributes } = shownDetail(span.detail);
      spans.push({ span_id: span.span_id, parent_span_id: span.parent_span_id || null, name: span.name, operation: span.operation, attributes, start: span.start_time_ns });
    }
    if (spans.length === 0) return null;
    spans.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    return toolCallsOf(spans);
  }
}
