// API keys: `ovr_` + 43 URL-safe random characters, shown once. Only the SHA-256 of the key and
// its first 12 characters (to find candidates) are stored.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const apiKeyPrefixLength = 12;
const marker = 'ovr_';

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = marker + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, apiKeyPrefixLength), hash: hashApiKey(key) };
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(marker);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function apiKeyMatches(hash: string, storedHash: string): boolean {
  const a = Buffer.from(hash, 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
