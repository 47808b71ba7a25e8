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
    const matches = ctx.is(jsonTypes);
    if (matches === null) return {};
    if (matches === false) throw fail.unsupportedMediaType(ctx.get('Content-Type'));
    const declared = ctx.request.length;
    if (declared !== undefined && declared > bytesMax) throw fail.payloadTooLarge(bytesMax);
    try {
      await parse(ctx, async () => {});
    } catch (error) {
      if ((error as { status?: number }).status === 413) throw fail.payloadTooLarge(bytesMax);
      throw error;
    }
    const body: unknown = (ctx.request as { body?: unknown }).body;
    if (body === undefined || body === '') return {};
    if (nestingDepth(body, depthMax) > depthMax) {
      throw fail.parse(`nesting is deeper than ${depthMax} levels`);
    }
    return body;
  };
}

/** Depth of nested objects and arrays, counting stops once past `limit`. */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    const children = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return deepest;
}
