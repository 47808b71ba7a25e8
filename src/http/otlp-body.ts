// Reading an OTLP/HTTP request body: its encoding from the media type (415 otherwise), the raw
// bytes under a byte limit (413), and gzip undone under the same limit, which counts the
// decompressed bytes. Every failure is one of the API's DRF-shaped errors.
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { OtlpEncoding } from '../traces/otlp.ts';
import { readBodyBytes } from './body.ts';
import { fail } from './errors.ts';
import type { ApiContext } from './route.ts';

const gunzipAsync = promisify(gunzip);

const encodings: Readonly<Record<string, OtlpEncoding>> = {
  'application/x-protobuf': 'protobuf',
  'application/json': 'json',
};

export function otlpEncoding(ctx: ApiContext): OtlpEncoding {
  const encoding = encodings[ctx.request.type];
  if (!encoding) throw fail.unsupportedMediaType(ctx.get('Content-Type'));
  return encoding;
}

export async function readOtlpBody(ctx: ApiContext, bytesMax: number): Promise<Buffer> {
  const contentEncoding = ctx.get('Content-Encoding').trim().toLowerCase();
  if (contentEncoding !== '' && contentEncoding !== 'identity' && contentEncoding !== 'gzip') {
    throw fail.unsupportedMediaType(`${ctx.get('Content-Type')}; Content-Encoding: ${contentEncoding}`);
  }
  const raw = await readBodyBytes(ctx, bytesMax);
  return contentEncoding === 'gzip' ? gunzipWithin(raw, bytesMax) : raw;
}

async function gunzipWithin(compressed: Buffer, bytesMax: number): Promise<Buffer> {
  try {
    return await gunzipAsync(compressed, { maxOutputLength: bytesMax });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw fail.payloadTooLarge(bytesMax);
    throw fail.malformed(`Gzip parse error - ${(error as Error).message}`);
  }
}
