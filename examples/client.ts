// A small typed client over the global fetch. Every type comes from `paths` in api-types.ts
// (generated from the service's OpenAPI document), so the path, its path parameters, the query
// string, the request body and the response body are all checked by tsc:
//
//   const agent = await api.post('/api/agents/', { body: { name: 'Support bot', project: id, slug: 'support' } });
//   agent.active_dataset;                  // string | null, from agents.agent-response
//   api.post('/api/agents/', { body: { nmae: 'x' } });   // tsc error: 'nmae' does not exist
//   api.get('/api/jobs/{id}/');                           // tsc error: path parameter id missing
//
// Any answer outside 2xx is thrown as an ApiError carrying the status and the body.
import type { paths } from './api-types.ts';

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

/** The paths that offer `M` (openapi-typescript writes `get?: never` for the others). */
type PathsWith<M extends Method> = { [P in keyof paths]: undefined extends paths[P][M] ? never : P }[keyof paths];

type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;

/** `{ path }` when the path has parameters, `{ query? }` when it takes a query, `{ body }` when it reads one. */
type RequestOptions<Op> = PathPart<Op> & QueryPart<Op> & BodyPart<Op>;
type PathPart<Op> = Op extends { parameters: { path: infer Params } } ? { path: Params } : {};
type QueryPart<Op> = Op extends { parameters: { query?: infer Query } }
  ? [NonNullable<Query>] extends [never] ? {} : { query?: NonNullable<Query> }
  : {};
type BodyPart<Op> = Op extends { requestBody?: infer RequestBody }
  ? NonNullable<RequestBody> extends { content: { 'application/json': infer Body } }
    ? {} extends Pick<Op, 'requestBody' & keyof Op> ? { body?: Body } : { body: Body }
    : {}
  : {};

/** The options argument, optional when nothing in it is required. */
type OptionsArg<Op> = {} extends RequestOptions<Op> ? [options?: RequestOptions<Op>] : [options: RequestOptions<Op>];

/** The JSON body of the operation's 2xx answers (undefined for 204 No Content). */
type SuccessBody<Op> = Op extends { responses: infer Responses }
  ? { [S in keyof Responses & (200 | 201 | 202 | 204)]: Responses[S] extends { content: { 'application/json': infer Body } } ? Body : undefined }[keyof Responses & (200 | 201 | 202 | 204)]
  : never;

type Call<M extends Method> = <P extends PathsWith<M>>(path: P, ...options: OptionsArg<Operation<P, M>>) => Promise<SuccessBody<Operation<P, M>>>;

export class ApiError extends Error {
  constructor(
    readonly method: string,
    readonly url: string,
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`${method} ${url} answered ${status}: ${typeof body === 'string' ? body : JSON.stringify(body)}`);
    this.name = 'ApiError';
  }
}

export class ApiClient {
  /** `baseUrl` without a trailing slash, e.g. http://localhost:8000; `token` is a JWT access token. */
  constructor(
    readonly baseUrl: string,
    readonly token?: string,
  ) {}

  /** The same client, sending `Authorization: Bearer <token>`. */
  withToken(token: string): ApiClient {
    return new ApiClient(this.baseUrl, token);
  }

  readonly get: Call<'get'> = (path, ...[options]) => this.request('GET', path, options);
  readonly post: Call<'post'> = (path, ...[options]) => this.request('POST', path, options);
  readonly put: Call<'put'> = (path, ...[options]) => this.request('PUT', path, options);
  readonly patch: Call<'patch'> = (path, ...[options]) => this.request('PATCH', path, options);
  readonly delete: Call<'delete'> = (path, ...[options]) => this.request('DELETE', path, options);

  /** The untyped core: fills in path parameters, adds the query string, sends JSON, reads JSON. */
  private async request<T>(
    method: string,
    template: string,
    options: { path?: Record<string, string>; query?: Record<string, unknown>; body?: unknown } = {},
  ): Promise<T> {
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(options.path?.[name] ?? ''));
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) query.set(name, String(value));
    }
    const url = `${this.baseUrl}${path}${query.size ? `?${query}` : ''}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await response.text();
    const body: unknown = text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text || undefined;
    if (!response.ok) throw new ApiError(method, url, response.status, body);
    return body as T;
  }
}
