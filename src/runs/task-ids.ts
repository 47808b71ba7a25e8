// A task's id and its lease tokens. A task is a position in its run (src/domain/run-tasks.ts), so
// its id is made from what names it, as a result's id is (src/domain/result-row.ts): the run id's
// first 48 bits and the position, in a UUID of version 8 (RFC 9562's custom version):
//
//   rrrrrrrr-rrrr-8000-8000-pppppppppppp
//
// Nothing is stored for it; the run is found from the prefix (no two live runs share one: a new
// run's id is drawn again until it does not) and the position read back.
import { randomBytes } from 'node:crypto';

export function taskIdOf(run: string, position: number): string {
  return `${run.slice(0, 13)}-8000-8000-${position.toString(16).padStart(12, '0')}`;
}

/**
 * The run prefix and position a task id names, or undefined when it is not a task id. Any case,
 * as every other id is read (a UUID's hex digits are case-insensitive).
 */
export function taskKeyOf(given: string): { prefix: string; position: number } | undefined {
  const id = given.toLowerCase();
  if (id.length !== 36 || id.slice(13, 24) !== '-8000-8000-') return undefined;
  const position = /^[0-9a-f]{12}$/.test(id.slice(24)) ? parseInt(id.slice(24), 16) : NaN;
  return Number.isSafeInteger(position) ? { prefix: id.slice(0, 13), position } : undefined;
}

/** The prefix of a run id that its tasks' ids carry. */
export function runPrefixOf(run: string): string {
  return run.slice(0, 13);
}

/** Bytes of randomness in a lease token (128 bits: unguessable), written as 22 base64url characters. */
const tokenBytes = 16;

/**
 * Random bytes drawn a few kilobytes at a time: one call into OpenSSL cost ~15-20 us here, against
 * well under a microsecond a token from the pool (a one-task lease draws one).
 */
class TokenPool {
  private bytes = Buffer.alloc(0);
  private at = 0;

  take(count: number): string[] {
    const tokens: string[] = [];
    for (let i = 0; i < count; i++) {
      if (this.at + tokenBytes > this.bytes.length) {
        this.bytes = randomBytes(Math.max(4096, tokenBytes * count));
        this.at = 0;
      }
      tokens.push(this.bytes.toString('base64url', this.at, (this.at += tokenBytes)));
    }
    return tokens;
  }
}

/** `count` fresh lease tokens: each lease gets a new one, so that an answer under an old lease is told apart. */
export function leaseTokens(count: number): string[] {
  return pool.take(count);
}

const pool = new TokenPool();
