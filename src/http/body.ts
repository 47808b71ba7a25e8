// Reading a JSON request body: a media-type check (415), a byte limit (413), a nesting limit,
// and JSON parse errors in DRF's words. An absent or empty body reads as {} (as DRF's
// request.data does).
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { fail } from './errors.ts';

const jsonTypes = ['application/json', 'application/*+json'];

export type BodyReader = (ctx: Context) => Promise<unknown>;

export function jsonBodyReader(bytesMax: number, depthMax: number): BodyReader {
  const parse = koaBody({
    json: true,
    jsonStrict: false,
    jsonLimit: bytesMax,
    urlencoded: false,
    text: false,
    multipart: false,
    jsonTypes,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return async (ctx) => {
    if (!hasBody(ctx)) return {};
    if (!isJsonType(ctx.request.type.toLowerCase())) throw fail.unsupportedMediaType(ctx.get('Content-Type'));
    const declared = ctx.request.length;
    if (declared !== undefined && declared > bytesMax) throw fail.payloadTooLarge(bytesMax);
    try {
      await parse(ctx, async () => {});
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status === 413) throw fail.payloadTooLarge(bytesMax);
      // Decompression (gzip, deflate, br) fails with zlib's own errors, which carry no status.
      if (status === undefined && isEncoded(ctx)) throw fail.parse(`the body is not valid ${ctx.get('Content-Encoding')} (${(error as Error).message})`);
      throw error;
    }
    const body: unknown = (ctx.request as { body?: unknown }).body;
    if (body === undefined || body === '') return {};
    const problem = jsonProblem(body, depthMax);
    if (problem) throw fail.parse(problem);
    return body;
  };
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
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > depthMax) return `nesting is deeper than ${depthMax} levels`;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object') {
        if (child !== null) stack.push([child, depth + 1]);
      } else if (typeof child === 'number' && !Number.isFinite(child)) {
        return 'a number is too large';
      }
    }
  }
  return null;
}
