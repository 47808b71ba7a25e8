// OTLP/HTTP trace ingestion (POST /v1/traces and /api/v1/traces) and the span queries: the
// distinct service names, the trace list (one row per trace, or every span) and one trace.
import { Readable } from 'node:stream';
import type { Registry } from '../../actors/registry.ts';
import type { Clock } from '../../clock.ts';
import type { Limits } from '../../config.ts';
import type { ComputePool } from '../../compute/compute-pool.ts';
import type { ChangeFeed, Published } from '../../events/change-feed.ts';
import type { ReadModel } from '../../read-model.ts';
import type { ResultIntake } from '../../results/result-intake.ts';
import type { Tenancy } from '../../tenancy.ts';
import { jsonBytes, type JsonValue } from '../../traces/json-text.ts';
import { SpanLinker } from '../../traces/linking.ts';
import type { ExportRequest } from '../../traces/otlp-wire.ts';
import { decodeExportRequest, encodeExportResponse, OtlpDecodeError, readTranscoded, type OtlpEncoding } from '../../traces/otlp.ts';
import { listSpans, serviceNames, traceView, visibleTraceKeys } from '../../traces/span-reads.ts';
import { parseSpanQuery, spanQuerySchema, type SpanQuery } from '../../traces/span-query.ts';
import { spanJson, type SpanRecord } from '../../traces/span-record.ts';
import { spansPerSlice, traceAnswerBytes, traceAnswerChunks, traceSpansInTurns } from '../../traces/trace-answer.ts';
import type { Ingested } from '../../traces/span-store.ts';
import type { SpanEvaluation } from '../../traces/span-evaluation.ts';
import { AttributeDepthError, countSpans, draftSpans, idRefusal, spanRecord, type Drafted, type SpanDraft, type SpanLinks } from '../../traces/spans.ts';
import type { Traces } from '../../traces/traces.ts';
import type { Validator } from '../../validation/validator.ts';
import { fail } from '../errors.ts';
import type { Lists } from '../pages.ts';
import { otlpEncoding, readOtlpBody } from '../otlp-body.ts';
import { replyJsonStream, replyJsonText, type ApiContext, type Route } from '../route.ts';

/** What these routes use. */
export interface TraceCollaborators {
  /** Spans are stored in their projects' gates (registry.gates); links may create agents. */
  registry: Registry;
  readModel: ReadModel;
  tenancy: Tenancy;
  traces: Traces;
  /** Results that spans report. */
  resultIntake: ResultIntake;
  /** Where spans.ingested is announced. */
  changes: ChangeFeed;
  /** The span query's schema. */
  validator: Validator;
  /** Where a long OTLP/JSON body is transcoded, off the event loop. */
  compute: ComputePool;
  lists: Lists;
  clock: Clock;
  limits: Limits;
}

export function traceRoutes(collaborators: TraceCollaborators): Route[] {
  const { registry, readModel, tenancy, traces, resultIntake, changes, validator, compute, lists, clock, limits } = collaborators;
  const linker = new SpanLinker({ readModel, registry, clock, tenancy });

  // While an export's commit is in flight nothing of it is held but what answers it: exports in
  // flight that survive a garbage collection are copied by it, and with 512-span exports that
  // cost more than anything else the collector did. So the functions below that wait for the
  // commit are not async (an async function's frame holds its variables across an await), and
  // what they wait with is made where the spans are out of reach (announce, refusedCount).

  /**
   * Stores an export's spans, one ingest per project (all in the projects' gates), and announces
   * each project's new spans once they are durable. Resolves with how many spans were refused
   * because their trace was full.
   */
  const store = (records: readonly SpanRecord[]): Promise<number> => {
    const byProject = new Map<string, SpanRecord[]>();
    for (const record of records) {
      const group = byProject.get(record.project);
      if (group) group.push(record);
      else byProject.set(record.project, [record]);
    }
    const groups = [...byProject.values()];
    // Worked out now, so that no span is held for the event while its commit is in flight.
    const announcements = groups.map((spans) => spansIngested(spans, limits.eventTraceIdsMax));
    // The gate calls this closure at once and keeps nothing of it; what waits is made by announce().
    const ingested = registry.gates.pass([...byProject.keys()], () => Promise.all(groups.map((spans) => traces.ingest(spans))));
    return ingested.then(announce(changes, announcements));
  };

  /** Reads, decodes, drafts and links an export, then stores it: resolves once it is durable. */
  const accept = async (ctx: ApiContext, encoding: OtlpEncoding): Promise<{ rejected: number; refused: number }> => {
    const request = await decode(compute, await readOtlpBody(ctx, limits.traceBodyBytesMax), encoding);
    const spans = countSpans(request);
    if (spans > limits.spanBatchMax) {
      throw fail.payloadTooLarge(limits.traceBodyBytesMax, `An export may hold at most ${limits.spanBatchMax} spans, not ${spans}.`);
    }
    const { spans: drafts, rejected } = draft(request, limits.jsonDepthMax);
    const links = await linker.linksFor(ctx.state.principal, drafts);
    const receivedAt = clock.nowMs();
    if (drafts.length === 0) return { rejected, refused: 0 };
    // An agent under test, sending its spans with a span token, does not write its own results.
    const { byIteration, unlinked } = ctx.state.principal.spanToken ? { byIteration: new Map<string, SpanEvaluation[]>(), unlinked: 0 } : evaluationsByIteration(drafts, links);
    // Returned, not awaited: this frame, and the export in it, ends here.
    const stored = store(drafts.map((span, index) => spanRecord(span, links[index]!, receivedAt))).then(refusedCount(rejected));
    if (byIteration.size === 0 && unlinked === 0) return stored;
    return Promise.all([stored, resultIntake.applySpanResults(byIteration, unlinked)]).then(([counts]) => counts);
  };

  const ingest = async (ctx: ApiContext) => {
    const encoding = otlpEncoding(ctx);
    const { rejected, refused } = await accept(ctx, encoding);
    const response = encodeExportResponse(encoding, rejected + refused, refusalReasons(rejected, refused, limits.spansPerTraceMax));
    ctx.status = 200;
    if (encoding === 'protobuf') ctx.type = 'application/x-protobuf';
    ctx.body = response;
  };

  const spanQuery = (ctx: ApiContext): SpanQuery =>
    parseSpanQuery(
      validator.documents.get(spanQuerySchema)!,
      ctx.state.query,
      ctx.query,
      tenancy.visibleProjects(ctx.state.principal),
      limits,
    );

  const ingestRoute = (path: string): Route => ({
    method: 'POST',
    path,
    auth: 'or-span-token',
    summary: 'Export spans over OTLP/HTTP (protobuf or JSON, optionally gzip); answers ExportTraceServiceResponse. Takes a span token (POST /api/auth/span-tokens/) too.',
    rawBody: { media: ['application/x-protobuf', 'application/json'], description: 'An OTLP ExportTraceServiceRequest, optionally with Content-Encoding: gzip.' },
    responses: { 200: { media: { 'application/x-protobuf': null, 'application/json': 'traces.export-response' } } },
    handle: ingest,
  });

  return [
    ingestRoute('/v1/traces'),
    ingestRoute('/api/v1/traces'),
    {
      method: 'GET',
      path: '/api/traces/services',
      auth: true,
      query: spanQuerySchema,
      summary: 'The distinct service names of the spans the caller can see, sorted.',
      responses: { 200: { list: 'traces.service-name-response' } },
      handle(ctx) {
        const names = serviceNames(traces.store, spanQuery(ctx));
        const page = lists.paginate(ctx, (offset, limit) => ({ count: names.length, items: names.slice(offset, offset + limit) }), (name) => name);
        sendJson(ctx, { ...page });
      },
    },
    {
      method: 'GET',
      path: '/api/traces',
      auth: true,
      query: spanQuerySchema,
      summary: 'One row per trace (its root span, or its earliest while the root is missing), or every span with all_spans=true.',
      responses: { 200: { list: 'traces.span-response' } },
      handle(ctx) {
        const query = spanQuery(ctx);
        const mode = ctx.state.query.all_spans === true ? 'spans' : 'heads';
        // A trace's row shows the whole trace's tokens; a span of all_spans its own.
        const rowJson = mode === 'heads' ? (span: SpanRecord) => spanJson(span, traces.store.traceTokens(span.project, span.trace_id)) : (span: SpanRecord) => spanJson(span);
        const page = lists.paginate(ctx, (offset, limit) => listSpans(traces.store, query, mode, offset, limit), rowJson);
        sendJson(ctx, { ...page });
      },
    },
    {
      method: 'GET',
      path: '/api/traces/:trace_id',
      auth: true,
      query: spanQuerySchema,
      params: { trace_id: /^[0-9a-fA-F]{32}$/ },
      summary: "One trace: its root, how many of its spans match, and those spans in start order.",
      responses: { 200: 'traces.trace-response' },
      async handle(ctx) {
        const traceId = ctx.params.trace_id!.toLowerCase();
        const query = spanQuery(ctx);
        const spans = await traceSpansInTurns(traces.store, visibleTraceKeys(traces.store.spanKeysOfTrace(traceId), query));
        const view = traceView(spans, query, limits.traceDetailSpansMax);
        if (!view) throw fail.notFound();
        const root = spanJson(view.root, traces.store.traceTokens(view.root.project, traceId));
        const answer = { head: { trace_id: traceId, root, span_count: view.spanCount }, spans: view.spans };
        if (view.spans.length <= spansPerSlice) replyJsonText(ctx, 200, traceAnswerBytes(answer));
        else replyJsonStream(ctx, 200, Readable.from(traceAnswerChunks(answer)));
      },
    },
  ];
}

/**
 * The spans.ingested event of one project's spans of an export (which traces and services), for
 * however many of them turn out to be new.
 */
function spansIngested(spans: readonly SpanRecord[], traceIdsMax: number): (stored: number) => Published {
  const traceIds = [...new Set(spans.map((span) => span.trace_id))].slice(0, traceIdsMax);
  const serviceNames = [...new Set(spans.map((span) => span.service_name))].sort();
  const project = spans[0]!.project;
  return (stored) => {
    const data = JSON.stringify({ project, trace_ids: traceIds, service_names: serviceNames, count: stored });
    return { type: 'spans.ingested', project, agent: null, job: null, audience: null, data };
  };
}

/** Publishes the spans each project stored once they are durable; resolves with those refused. */
function announce(changes: ChangeFeed, announcements: readonly ((stored: number) => Published)[]) {
  return (ingested: readonly Ingested[]): number => {
    changes.publish(ingested.flatMap(({ stored }, i) => (stored > 0 ? [announcements[i]!(stored)] : [])));
    return ingested.reduce((refused, outcome) => refused + outcome.refused, 0);
  };
}

/**
 * The results an export's spans report, by the iteration each links to, and how many report one
 * without a link to an iteration of their own project (those cannot be applied).
 */
function evaluationsByIteration(drafts: readonly SpanDraft[], links: readonly SpanLinks[]) {
  const byIteration = new Map<string, SpanEvaluation[]>();
  let unlinked = 0;
  drafts.forEach((draft, i) => {
    if (!draft.evaluation) return;
    const iteration = links[i]!.iteration;
    if (iteration === null) {
      unlinked++;
      return;
    }
    const group = byIteration.get(iteration);
    if (group) group.push(draft.evaluation);
    else byIteration.set(iteration, [draft.evaluation]);
  });
  return { byIteration, unlinked };
}

/** The counts an export answers with, once its refused spans are known. */
function refusedCount(rejected: number) {
  return (refused: number) => ({ rejected, refused });
}

/** Why spans were refused, for partial_success: malformed ids, full traces, or both ('' for none). */
function refusalReasons(malformed: number, full: number, spansPerTraceMax: number): string {
  const reasons: string[] = [];
  if (malformed > 0) reasons.push(idRefusal);
  if (full > 0) reasons.push(`a trace holds at most ${spansPerTraceMax} spans: those past it are refused`);
  return reasons.join('; ');
}

/**
 * An export's request: a protobuf body read here; an OTLP/JSON body transcoded to protobuf by the
 * compute pool (off the event loop when long: a 10,000-span export's JSON held it ~150 ms), then
 * read here.
 */
async function decode(compute: ComputePool, body: Buffer, encoding: OtlpEncoding): Promise<ExportRequest> {
  const transcoded = encoding === 'json' ? await compute.run({ kind: 'otlpJson', body }) : undefined;
  if (transcoded && 'error' in transcoded) throw fail.parse(transcoded.error);
  try {
    return transcoded ? readTranscoded(transcoded.bytes) : decodeExportRequest(body, encoding);
  } catch (error) {
    if (!(error instanceof OtlpDecodeError)) throw error;
    throw encoding === 'json' ? fail.parse(error.message) : fail.malformed(`Protobuf parse error - ${error.message}`);
  }
}

function draft(request: ExportRequest, depthMax: number): Drafted {
  try {
    return draftSpans(request, depthMax);
  } catch (error) {
    if (error instanceof AttributeDepthError) throw fail.malformed(error.message);
    throw error;
  }
}

/** Span answers hold 64-bit nanosecond times, written exactly (see json-text.ts). */
function sendJson(ctx: ApiContext, body: JsonValue): void {
  replyJsonText(ctx, 200, jsonBytes(body));
}
