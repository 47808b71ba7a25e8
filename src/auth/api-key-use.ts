// An API key's last_used_at: a convenience, not a write per request. A use is recorded at most
// once a minute per key, in the background (a failure here is harmless), with at most one
// recording in flight per key.
import type { IdentityCommand, IdentityEvent } from '../domain/identity.ts';
import type { ApiKey } from '../domain/records.ts';

const recordIntervalMs = 60_000;

export interface ApiKeyUseDeps {
  /** Asks the identity actor (the registry's). */
  ask(command: IdentityCommand): Promise<readonly IdentityEvent[]>;
  nowMs(): number;
  /** Told when a recording failed. */
  failed(error: unknown): void;
}

export function apiKeyUseRecorder(deps: ApiKeyUseDeps): (apiKey: ApiKey) => void {
  const inFlight = new Set<string>();
  return (apiKey) => {
    const now = deps.nowMs();
    if (inFlight.has(apiKey.id)) return;
    if (apiKey.last_used_at !== null && now - Date.parse(apiKey.last_used_at) < recordIntervalMs) return;
    inFlight.add(apiKey.id);
    deps
      .ask({
        type: 'RecordApiKeyUse',
        id: apiKey.id,
        at: new Date(now).toISOString(),
        unlessUsedSince: new Date(now - recordIntervalMs).toISOString(),
      })
      .catch(deps.failed)
      .finally(() => inFlight.delete(apiKey.id));
  };
}
