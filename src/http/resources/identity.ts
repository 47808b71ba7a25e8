// /api/auth/: registration, tokens (simplejwt's flow, with rotating refresh tokens), the current
// user, and API keys.
import { randomUUID } from 'node:crypto';
import type { Registry } from '../../actors/registry.ts';
import { generateApiKey } from '../../auth/api-keys.ts';
import type { LoginThrottle } from '../../auth/login-throttle.ts';
import { burnPasswordCheck, hashPassword, verifyPassword } from '../../auth/passwords.ts';
import { InvalidToken, type Tokens } from '../../auth/tokens.ts';
import type { ApiKey } from '../../domain/records.ts';
import { Rejected, invalid } from '../../domain/rejection.ts';
import { timestamp, type Clock } from '../../clock.ts';
import type { ReadModel } from '../../read-model.ts';
import type { Tenancy } from '../../tenancy.ts';
import { fail } from '../errors.ts';
import type { Lists } from '../pages.ts';
import { apiKeyJson, createdApiKeyJson, userJson } from '../representations.ts';
import { noContent, reply, type Route } from '../route.ts';

/** What these routes use. */
export interface IdentityCollaborators {
  registry: Registry;
  readModel: ReadModel;
  tenancy: Tenancy;
  lists: Lists;
  tokens: Tokens;
  loginThrottle: LoginThrottle;
  clock: Clock;
  /** The cost of a password hash (passwordHashCost). */
  passwordHashCost: number;
}

export function identityRoutes(collaborators: IdentityCollaborators): Route[] {
  const { registry, readModel, tenancy, lists, tokens, loginThrottle, clock, passwordHashCost } = collaborators;
  const nowSeconds = () => Math.floor(clock.nowMs() / 1000);
  const listApiKeys = lists.endpoint({ schema: 'auth.api-keys-list-query', serialize: apiKeyJson });

  return [
    {
      method: 'POST',
      path: '/api/auth/register',
      auth: false,
      body: 'auth.register',
      summary: 'Register a user; answers with a token pair.',
      responses: { 201: 'auth.register-response' },
      async handle(ctx) {
        const { email, password, password_confirm: confirmation } = ctx.state.body as Record<string, string>;
        if (password !== confirmation) throw invalid({ password_confirm: ["Password fields didn't match."] });
        const normalized = email!.toLowerCase();
        if (readModel.userIdsByEmail.has(normalized)) throw invalid({ email: ['An account with this email already exists.'] });
        const passwordHash = await hashPassword(password!, passwordHashCost);
        const [registered] = await registry.identity.ask({ type: 'RegisterUser', email: normalized, passwordHash, now: timestamp(clock) });
        if (registered?.type !== 'UserRegistered') throw new Error('registration produced no user');
        reply(ctx, 201, { ...(await tokens.issuePair(registered.user.id)), user: userJson(registered.user) });
      },
    },
    {
      method: 'POST',
      path: '/api/auth/token',
      auth: false,
      body: 'auth.token',
      summary: 'Exchange email and password for an access and a refresh token.',
      responses: { 200: 'auth.token-pair-response' },
      errors: [401, 429],
      async handle(ctx) {
        const { email, password } = ctx.state.body as Record<string, string>;
        const normalized = email!.toLowerCase();
        const wait = loginThrottle.waitSeconds(normalized, ctx.ip, nowSeconds());
        if (wait > 0) throw fail.throttled(wait);
        const userId = readModel.userIdsByEmail.get(normalized);
        const user = userId === undefined ? undefined : readModel.users.get(userId);
        const valid = user ? await verifyPassword(password!, user.password_hash) : await burnPasswordCheck(password!, passwordHashCost).then(() => false);
        if (!user || !valid) {
          loginThrottle.recordFailure(normalized, ctx.ip, nowSeconds());
          throw fail.authenticationFailed('No active account found with the given credentials');
        }
        loginThrottle.recordSuccess(normalized);
        reply(ctx, 200, await tokens.issuePair(user.id));
      },
    },
    {
      method: 'POST',
      path: '/api/auth/token/refresh',
      auth: false,
      body: 'auth.token-refresh',
      summary: 'Exchange a refresh token for a new pair; the old refresh token stops working.',
      responses: { 200: 'auth.token-pair-response' },
      errors: [401],
      async handle(ctx) {
        const { refresh } = ctx.state.body as Record<string, string>;
        let claims;
        try {
          claims = await tokens.verify(refresh!, 'refresh');
        } catch (error) {
          if (error instanceof InvalidToken) throw fail.authenticationFailed('Token is invalid or expired', 'token_not_valid');
          throw error;
        }
        if (!readModel.users.has(claims.userId)) throw fail.authenticationFailed('Token is invalid or expired', 'token_not_valid');
        try {
          await registry.identity.ask({ type: 'RotateRefreshToken', jti: claims.jti, expiresAt: claims.exp, nowSeconds: nowSeconds() });
        } catch (error) {
          if (error instanceof Rejected) throw fail.authenticationFailed('Token is blacklisted', 'token_not_valid');
          throw error;
        }
        reply(ctx, 200, await tokens.issuePair(claims.userId));
      },
    },
    {
      method: 'GET',
      path: '/api/auth/me',
      auth: true,
      summary: 'The current user.',
      responses: { 200: 'auth.user-response' },
      handle(ctx) {
        reply(ctx, 200, userJson(ctx.state.principal.user));
      },
    },
    {
      method: 'POST',
      path: '/api/auth/span-tokens',
      auth: true,
      body: 'auth.span-token-create',
      summary: 'A span token for one project: what an agent under test may hold to export its spans, and nothing more.',
      responses: { 201: 'auth.span-token-response' },
      async handle(ctx) {
        const { principal, body } = ctx.state;
        const project = body.project === undefined ? onlyProject(tenancy.visibleProjects(principal)) : tenancy.referencedProject(principal, String(body.project));
        const { token, exp } = await tokens.issueSpans(principal.user.id, project, principal.apiKey?.id ?? null);
        reply(ctx, 201, { token, project, expires_at: new Date(exp * 1000).toISOString() });
      },
    },
    {
      method: 'GET',
      path: '/api/auth/api-keys',
      auth: true,
      query: 'auth.api-keys-list-query',
      summary: "List the caller's API keys (never the keys themselves).",
      responses: { 200: { list: 'auth.api-key-response' } },
      handle(ctx) {
        const { principal } = ctx.state;
        listApiKeys(ctx, {
          collection: readModel.apiKeys,
          partitions: [String(principal.user.id)],
          // A key sees only its own project, here as everywhere.
          fixedFilters: principal.apiKey ? [{ field: 'project', op: 'exact', value: principal.apiKey.project }] : [],
        });
      },
    },
    {
      method: 'POST',
      path: '/api/auth/api-keys',
      auth: true,
      body: 'auth.api-key-create',
      summary: 'Create an API key for one project; the key is shown only in this answer.',
      responses: { 201: 'auth.api-key-created-response' },
      async handle(ctx) {
        const { principal, body } = ctx.state;
        const project = String(body.project);
        tenancy.referencedProject(principal, project);
        const expiresAt = (body.expires_at as string | null | undefined) ?? null;
        if (expiresAt !== null && Date.parse(expiresAt) <= clock.nowMs()) {
          throw invalid({ expires_at: ['Expiry must be in the future.'] });
        }
        const { key, prefix, hash } = generateApiKey();
        const apiKey: ApiKey = {
          id: randomUUID(),
          user: principal.user.id,
          project,
          name: body.name === undefined ? '' : (body.name as string | null),
          prefix,
          key_hash: hash,
          is_active: true,
          created_at: timestamp(clock),
          expires_at: expiresAt,
          last_used_at: null,
        };
        await registry.gates.pass([project], () =>
          registry.identity.ask({ type: 'CreateApiKey', apiKey }),
        );
        reply(ctx, 201, createdApiKeyJson(apiKey, key));
      },
    },
    {
      method: 'DELETE',
      path: '/api/auth/api-keys/:id',
      auth: true,
      summary: 'Revoke an API key.',
      responses: { 204: null },
      async handle(ctx) {
        const { principal } = ctx.state;
        const apiKey = readModel.apiKeys.get(ctx.params.id!);
        if (!apiKey || apiKey.user !== principal.user.id) throw fail.notFound();
        if (principal.apiKey && apiKey.project !== principal.apiKey.project) throw fail.notFound();
        await registry.identity.ask({ type: 'RevokeApiKey', id: apiKey.id, user: principal.user.id });
        noContent(ctx);
      },
    },
  ];
}

/** Where a span token asked for without `project` goes: the caller's one project (an API key's own), if it sees just one. */
function onlyProject(visible: readonly string[]): string {
  if (visible.length === 1) return visible[0]!;
  throw invalid({ project: ['This field is required.'] });
}
