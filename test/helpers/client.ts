// A small HTTP client for tests: JSON in, JSON out, with the caller's credentials. Every response
// it receives is held to the API document (documented-responses.ts): an undocumented status or a
// body that breaks its schema fails the test.
import { documentedResponses } from './documented-responses.ts';

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export type Credentials = { token: string } | { apiKey: string; header?: 'x-api-key' | 'authorization' | 'bearer' } | null;

/** A request whose connection failed (refused, reset), named with its method and address. */
export class RequestFailed extends Error {
  override name = 'RequestFailed';
}

/**
 * True when a request's connection died under it (the service was killed): before the answer's
 * head (undici's 'fetch failed', which the client names as RequestFailed) or while its body was
 * streaming ('terminated', as a compressed answer is).
 */
export function connectionLost(error: unknown): boolean {
  return error instanceof RequestFailed || (error instanceof TypeError && error.message === 'terminated');
}

export class Client {
  constructor(readonly baseUrl: string, readonly credentials: Credentials = null) {}

  as(credentials: Credentials): Client {
    return new Client(this.baseUrl, credentials);
  }

  /** The same credentials at another address (a service restarted on another port). */
  at(baseUrl: string): Client {
    return new Client(baseUrl, this.credentials);
  }

  get<T = any>(path: string, query?: Record<string, string | number | boolean>): Promise<Reply<T>> {
    const search = query ? `?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}` : '';
    return this.request('GET', path + search);
  }

  /** Every item of a paginated list, page after page (each page must answer 200). */
  async listAll(path: string, query: Record<string, string | number | boolean> = {}): Promise<any[]> {
    const items: any[] = [];
    for (let page = 1; ; page++) {
      const reply = await this.get(path, { ...query, page_size: 100, page });
      if (reply.status !== 200) throw new Error(`${path} page ${page}: ${reply.status} ${reply.text}`);
      items.push(...reply.body.results);
      if (!reply.body.next) return items;
    }
  }

  post<T = any>(path: string, body?: unknown): Promise<Reply<T>> {
    return this.request('POST', path, body);
  }

  put<T = any>(path: string, body?: unknown): Promise<Reply<T>> {
    return this.request('PUT', path, body);
  }

  patch<T = any>(path: string, body?: unknown): Promise<Reply<T>> {
    return this.request('PATCH', path, body);
  }

  delete<T = any>(path: string): Promise<Reply<T>> {
    return this.request('DELETE', path);
  }

  /** Any request: `body` is sent as JSON unless it is a string or bytes (sent as they are). */
  async request<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply<T>> {
    const allHeaders: Record<string, string> = { ...this.authHeaders(), ...headers };
    let payload: string | Uint8Array | undefined;
    if (body !== undefined) {
      if (typeof body === 'string' || body instanceof Uint8Array) {
        payload = body;
      } else {
        payload = JSON.stringify(body);
        allHeaders['content-type'] ??= 'application/json';
      }
    }
    const response = await fetch(this.baseUrl + path, { method, headers: allHeaders, body: payload as BodyInit | undefined }).catch((error: Error) => {
      // undici says only "fetch failed": name the request and the cause (a reset, a refused connection).
      throw new RequestFailed(`${method} ${this.baseUrl}${path}: ${error.message}: ${String((error.cause as Error | undefined)?.message ?? error.cause)}`, { cause: error });
    });
    const text = await response.text();
    let parsed: unknown = text;
    const contentType = response.headers.get('content-type') ?? '';
    if (contentType.includes('json') && text) parsed = JSON.parse(text);
    (await documentedResponses()).check({ method, path, status: response.status, contentType, text, body: parsed });
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  private authHeaders(): Record<string, string> {
    const credentials = this.credentials;
    if (!credentials) return {};
    if ('token' in credentials) return { authorization: `Bearer ${credentials.token}` };
    switch (credentials.header ?? 'x-api-key') {
      case 'x-api-key':
        return { 'x-api-key': credentials.apiKey };
      case 'authorization':
        return { authorization: `Api-Key ${credentials.apiKey}` };
      case 'bearer':
        return { authorization: `Bearer ${credentials.apiKey}` };
    }
  }
}
