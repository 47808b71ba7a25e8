// Routes are data: method, path, who may call, which schemas check the body and the query, and
// the handler. One mount function gives every route the same pipeline (path ids -> auth -> the
// record the path names -> body -> validation -> handler), and the OpenAPI document is generated
// from the same table.
import type { Readable } from 'node:stream';
import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { Authenticator, Principal } from '../auth/authenticate.ts';
import type { Limits } from '../config.ts';
import type { JsonCache } from '../json-cache.ts';
import type { PageSizes } from '../query/pagination.ts';
import type { Body, Query, Validator } from '../validation/validator.ts';
import { canonicalUuidOf } from '../validation/validator.ts';
import type { BodyReader } from './body.ts';
import { fail } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiState {
  principal: Principal;
  body: Body;
  query: Query;
}

export type ApiContext = ParameterizedContext<ApiState, { params: Record<string, string> }>;

export interface Route {
  method: HttpMethod;
  /** Koa-router path without the trailing slash; both forms answer. */
  path: string;
  /**
   * False for the few open endpoints (health, register, token, schema, docs); 'or-span-token' where
   * a span token is taken too (span export), every other route refusing one as a wrong token type.
   */
  auth: boolean | 'or-span-token';
  /** $id of the body schema; PATCH validates it with nothing required. */
  body?: string;
  /** $id of the query-string schema. */
  query?: string;
  /** Byte limit for this route's body, when not the service default. */
  bodyBytesMax?: number;
  /** How path parameters are checked; every parameter is a UUID unless said otherwise. */
  params?: Readonly<Record<string, RegExp>>;
  /** One line for the API reference. */
  summary: string;
  /** The API reference's group, when it is not the path's resource (the console's pages). */
  tag?: string;
  /**
   * What each successful status answers, for the API reference and the tests that hold every
   * response to it. Error answers are derived from the rest of the route (src/http/openapi.ts).
   */
  responses: Readonly<Record<number, ResponseBody>>;
  /** Error statuses the handler itself answers, beyond those derived from auth, body, query and params. */
  errors?: readonly HandlerErrorStatus[];
  /** A body the handler reads itself rather than through `body`: its media types, with a description. */
  rawBody?: { media: readonly string[]; description: string };
  /** The page sizes of a list paginated with other sizes than the service's (see paginate). */
  pageSizes?: PageSizes;
  /**
   * The record the path names, looked up before the body is read: one the caller cannot see is
   * 404 whatever the body holds, as DRF's get_object() comes before the request's data is parsed.
   * Every route with a path parameter and a body declares it.
   */
  target?(ctx: ApiContext): unknown;
  handle(ctx: ApiContext): Promise<void> | void;
}

/**
 * A successful answer's body: a response schema's $id, a paginated envelope of items described by
 * a response schema, bodies by media type (a response schema's $id, or null where JSON Schema
 * cannot describe the body: protobuf, HTML), or no body at all (null, for 204).
 */
export type ResponseBody = string | { list: string } | { media: Readonly<Record<string, string | null>> } | null;

export type HandlerErrorStatus = 401 | 403 | 409 | 429 | 503;

/** What the pipeline checks a request with: who is calling, and its body and query against their schemas. */
export interface RequestChecks {
  authenticator: Authenticator;
  validator: Validator;
  limits: Limits;
}

export function mountRoutes(router: Router, routes: readonly Route[], checks: RequestChecks, readBody: (bytesMax?: number) => BodyReader): void {
  const { authenticator, validator, limits } = checks;
  for (const route of routes) {
    const reader = route.body ? readBody(route.bodyBytesMax) : undefined;
    const authOptions = { spanTokens: route.auth === 'or-span-token' };
    const pipeline = async (ctx: ApiContext) => {
      checkParams(ctx.params, route.params);
      if (route.auth) {
        const principal = authenticator.authenticate(ctx.headers, authOptions);
        ctx.state.principal = principal instanceof Promise ? await principal : principal;
      }
      route.target?.(ctx);
      if (reader && route.body) {
        const raw = await reader(ctx as never);
        ctx.state.body = validator.body(route.body, raw, { partial: route.method === 'PATCH' });
      }
      if (route.query) ctx.state.query = validator.query(route.query, ctx.query, limits.queryValueCharsMax);
      // Most handlers answer synchronously: awaiting them anyway would cost every request a tick.
      const handled = route.handle(ctx);
      if (handled) await handled;
    };
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    router[method](route.path, pipeline as never);
  }
}

/** A malformed id names nothing: 404, as Django's URL converters answer. */
function checkParams(params: Record<string, string>, patterns: Route['params']): void {
  for (const name in params) {
    const pattern = patterns?.[name];
    if (pattern) {
      if (!pattern.test(params[name]!)) throw fail.notFound();
      continue;
    }
    const id = canonicalUuidOf(params[name]!);
    if (id === undefined) throw fail.notFound();
    params[name] = id;
  }
}

/**
 * Sends a JSON body with a status, written out once here: Koa given the object itself would write
 * it out twice, once to learn its length and once to send it (a 100-task lease answered in ~75 us
 * instead of ~150 us).
 */
export function reply(ctx: ApiContext, status: number, body: unknown): void {
  replyJsonText(ctx, status, JSON.stringify(body));
}

/** Sends JSON that is already made, as text or as its UTF-8 bytes (see replyRecord, the lists' kept answers). */
export function replyJsonText(ctx: ApiContext, status: number, text: string | Buffer): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = text;
}

/** Sends JSON made as it is sent (a long answer made a slice at a time): chunked, without a Content-Length. */
export function replyJsonStream(ctx: ApiContext, status: number, chunks: Readable): void {
  ctx.status = status;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = chunks;
}

/**
 * Sends one record's representation. Records are immutable, so the JSON text of a hot record is
 * made once (kept by the JSON cache) rather than on every read.
 */
export function replyRecord<T extends object>(ctx: ApiContext, jsonCache: JsonCache, record: T, serialize: (record: T) => unknown, status = 200): void {
  replyJsonText(ctx, status, jsonCache.text(record, serialize));
}

export function noContent(ctx: ApiContext): void {
  ctx.status = 204;
  ctx.body = null;
}
