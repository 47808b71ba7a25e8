// The framework's floor: Koa, @koa/router and koa-body as the service uses them, with nothing of
// the service. It answers GET /api/agents/{id}/ with a ready JSON text the size of an agent's,
// and POST /api/job-iterations/ by parsing the JSON body and answering 201 with a ready text the
// size of an iteration's. What the bare server is to Node, this is to the stack the service is
// built on: a service figure can approach it, not pass it.
import Router from '@koa/router';
import Koa from 'koa';
import { koaBody } from 'koa-body';

const fields = (count: number) =>
  JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [`field_${i}`, i % 2 ? `value-${i}-${'x'.repeat(24)}` : i])));
const agentText = fields(24);
const iterationText = fields(20);

const app = new Koa();
const router = new Router();
let requests = 0;
app.use(async (ctx, next) => {
  ctx.set('X-Request-Id', `floor-${++requests}`);
  await next();
});
router.get('/api/agents/:id', (ctx) => {
  ctx.status = 200;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = agentText;
});
router.post('/api/job-iterations', koaBody(), (ctx) => {
  if (typeof (ctx.request.body as { job?: unknown }).job !== 'string') ctx.throw(400);
  ctx.status = 201;
  ctx.type = 'application/json; charset=utf-8';
  ctx.body = iterationText;
});
app.use(router.routes());
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address ? address.port : 0 })}\n`);
});
