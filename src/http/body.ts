// Reading a JSON request body: a media-type check (415), a byte limit (413), a nesting limit,
// and JSON parse errors in DRF's words. An absent or empty body reads as {} (as DRF's
// request.data does).
//
// Bodies sent as they are (no Content-Encoding: every client measured) are read with koa-body's
// own engine, raw-body and @hapi/bourne (UTF-8, a leading byte-order mark dropped, prototype keys
// refused), without its layers; encoded bodies (gzip, deflate, br) go through koa-body, which
// inflates them under the same byte limit. Measured on the iteration post, koa-body's layers (its type
// checks, co-body, raw-body and their listeners) were ~6% of the main thread and 2.4 KB of the
// ~36 KB allocated per request; of them, only raw-body's read is left on this path.
import bourne from '@hapi/bourne';
import type { Context, Middleware } from 'koa';
import getRawBody from 'raw-body';
import { fail } from './errors.ts';

const jsonTypes = ['application/json', 'application/*+json'];

export type BodyReader = (ctx: Context) => Promise<unknown>;

/**
 * koa-body's middleware for encoded bodies, loaded with the first of them: with zod and formidable
 * it is about 270 modules and a third of a second here, which every start paid for bodies that
 * clients seldom send.
 */
function encodedBodyParser(bytesMax: number): () => Promise<Middleware> {
  let parser: Promise<Middleware> | undefined;
  return () =>
    (parser ??= import('koa-body').then(({ HttpMethodEnum, koaBody }) =>
      koaBody({
        json: true,
        jsonStrict: false,
        jsonLimit: bytesMax,
        urlencoded: false,
        text: false,
        multipart: false,
        jsonTypes,
        parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
      }),
    ));
}

export function jsonBodyReader(bytesMax: number, depthMax: number): BodyReader {
  const encodedParser = encodedBodyParser(bytesMax);
  const inflated = async (ctx: Context): Promise<unknown> => {
    const parse = await encodedParser();
    try {
      await parse(ctx, async () => {});
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status === 413) throw fail.payloadTooLarge(bytesMax);
      // Decompression (gzip, deflate, br) fails with zlib's own errors, which carry no status.
      if (status === undefined) throw fail.parse(`the body is not valid ${ctx.get('Content-Encoding')} (${(error as Error).message})`);
      throw error;
    }
    return (ctx.request as { body?: unknown }).body;
  };
  return async (ctx) => {
    if (!hasBody(ctx)) return {};
    if (!isJsonType(ctx.request.type.toLowerCase())) throw fail.unsupportedMediaType(ctx.get('Content-Type'));
    const declared = ctx.request.length;
    if (declared !== undefined && declared > bytesMax) throw fail.payloadTooLarge(bytesMax);
    const body = isEncoded(ctx) ? await inflated(ctx) : parseJson(await readBodyText(ctx, bytesMax));
    if (body === undefined || body === '') return {};
    const problem = jsonProblem(body, depthMax);
    if (problem) throw fail.parse(problem);
    return body;
  };
}

/**
 * The request body's bytes, read by raw-body: refused past `bytesMax` bytes (413, before reading
 * when its declared length says so) and when it stops short of that length (400).
 */
export async function readBodyBytes(ctx: Context, bytesMax: number): Promise<Buffer> {
  try {
    return await getRawBody(ctx.req, { limit: bytesMax, length: ctx.request.length });
  } catch (error) {
    // raw-body's refusals as the API words them; the client's own failures to send are 400s.
    if ((error as { status?: number }).status !== 413) throw fail.badRequest('The request body was not received completely.');
    ctx.req.resume(); // the rest is drained unread, so the answer can be sent
    throw fail.payloadTooLarge(bytesMax);
  }
}

/** The body as UTF-8 text, a leading byte-order mark dropped (as co-body reads it). */
async function readBodyText(ctx: Context, bytesMax: number): Promise<string> {
  const text = (await readBodyBytes(ctx, bytesMax)).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Any JSON value ('' for no text), as co-body parses it: object keys named __proto__ are refused. */
function parseJson(text: string): unknown {
  if (text === '') return '';
  try {
    return bourne.parse(text, { protoAction: 'error' });
  } catch (error) {
    throw fail.parse((error as Error).message);
  }
}

/** As type-is decides: a body is coming when it is chunked or has a non-zero length. */
function hasBody(ctx: Context): boolean {
  const headers = ctx.req.headers;
  return headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
}

function isEncoded(ctx: Context): boolean {
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  return encoding !== '' && encoding !== 'identity';
}

/** jsonTypes, checked on the bare media type (koa-body matches the same list before parsing). */
function isJsonType(mediaType: string): boolean {
  return mediaType === 'application/json' || (mediaType.startsWith('application/') && mediaType.endsWith('+json'));
}

/**
 * What makes parsed JSON unfit to store, if anything: nesting deeper than `depthMax`, or a
 * number JSON.parse turned into Infinity (1e400), which would read back as null.
 */
export function jsonProblem(value: unknown, depthMax: number): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'a number is too large';
  return typeof value === 'object' && value !== null ? nodeProblem(value, 1, depthMax) : null;
}

/**
 * An object's or array's problem, allocating nothing. Which one is named when there are several
 * is as a depth-first walk from the last child finds them (the order this was first written in):
 * a node's own depth, then a number among its children, then the last child with a problem.
 */
function nodeProblem(node: object, depth: number, depthMax: number): string | null {
  if (depth > depthMax) return `nesting is deeper than ${depthMax} levels`;
  let objects = 0;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i];
      if (typeof child === 'object') {
        if (child !== null) objects++;
      } else if (typeof child === 'number' && !Number.isFinite(child)) return 'a number is too large';
    }
    if (objects === 0) return null;
    for (let i = node.length - 1; i >= 0; i--) {
      const child: unknown = node[i];
      if (typeof child === 'object' && child !== null) {
        const problem = nodeProblem(child, depth + 1, depthMax);
        if (problem !== null) return problem;
      }
    }
    return null;
  }
  const record = node as Record<string, unknown>;
  for (const key in record) {
    const child = record[key];
    if (typeof child === 'object') {
      if (child !== null) objects++;
    } else if (typeof child === 'number' && !Number.isFinite(child)) return 'a number is too large';
  }
  if (objects === 0) return null;
  // The last child's problem is the one named: the walk is forward, and a later problem replaces an earlier one.
  let found: string | null = null;
  for (const key in record) {
    const child = record[key];
    if (typeof child === 'object' && child !== null) {
      const problem = nodeProblem(child, depth + 1, depthMax);
      if (problem !== null) found = problem;
    }
  }
  return found;
}
