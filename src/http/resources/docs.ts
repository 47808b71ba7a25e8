// The API describing itself, open to everyone: GET /api/schema/ answers the OpenAPI 3.1 document
// generated from the route table and schemas/ (src/http/openapi.ts), and GET /api/docs/ an
// interactive reference (Swagger UI) whose files are served from the installed swagger-ui-dist
// package under /static/swagger-ui/ (where a Django service keeps its static files), so the
// reference works without reaching any other host.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { packageVersion } from '../../assets.ts';
import type { Limits } from '../../config.ts';
import type { Validator } from '../../validation/validator.ts';
import { openApiDocument, type OpenApiDocument } from '../openapi.ts';
import { replyJsonText, type Route } from '../route.ts';


const swaggerUiDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/** The files of swagger-ui-dist the reference page uses, with their media types. */
const assetTypes: Readonly<Record<string, string>> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};
// Only "." is escaped: the pattern is also the parameter's JSON Schema `pattern` in the API
// document, which must be a valid ECMA-262 regex in unicode mode, where "\-" is an error.
const assetPattern = new RegExp(`^(?:${Object.keys(assetTypes).map((name) => name.replace(/\./g, '\\.')).join('|')})$`, 'u');

/** Read once per process, on first use: the bundle is 1.7 MB that most services never serve. */
const assets = new Map<string, Buffer>();
function asset(name: string): Buffer {
  let content = assets.get(name);
  if (!content) assets.set(name, (content = readFileSync(join(swaggerUiDir, name))));
  return content;
}

/** Absolute paths: the page answers at /api/docs as well as /api/docs/. */
const referencePage = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>API reference</title>
  <link rel="stylesheet" href="/static/swagger-ui/swagger-ui.css">
  <link rel="icon" type="image/png" href="/static/swagger-ui/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/static/swagger-ui/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/static/swagger-ui/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({ url: '/api/schema/', dom_id: '#swagger-ui', deepLinking: true });
  </script>
</body>
</html>
`;

/** What the document is made from besides the routes: the schemas they name, and the limits it states. */
export interface DocsCollaborators {
  validator: Validator;
  limits: Limits;
}

/** The OpenAPI document of `routes`, the table of every route the service serves. */
export function apiDocumentOf(routes: readonly Route[], { validator, limits }: DocsCollaborators): OpenApiDocument {
  return openApiDocument(routes, validator.documents, { version: packageVersion, limits });
}

/**
 * The document describes every route, these included, so it comes from the finished table:
 * `allRoutes` is asked for it on the first request, once the table is complete.
 */
export function docsRoutes(docs: DocsCollaborators, allRoutes: () => readonly Route[]): Route[] {
  let documentText: string | undefined;
  return [
    {
      method: 'GET',
      path: '/api/schema',
      auth: false,
      summary: 'This API as an OpenAPI 3.1 document.',
      responses: { 200: 'responses.openapi-document' },
      handle(ctx) {
        documentText ??= JSON.stringify(apiDocumentOf(allRoutes(), docs));
        replyJsonText(ctx, 200, documentText);
      },
    },
    {
      method: 'GET',
      path: '/api/docs',
      auth: false,
      summary: 'The interactive API reference (Swagger UI).',
      responses: { 200: { media: { 'text/html': null } } },
      handle(ctx) {
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = referencePage;
      },
    },
    {
      method: 'GET',
      path: '/static/swagger-ui/:file',
      auth: false,
      params: { file: assetPattern },
      summary: 'A file of the interactive API reference (Swagger UI).',
      responses: { 200: { media: Object.fromEntries(Object.values(assetTypes).map((type) => [type.split(';')[0]!, null])) } },
      handle(ctx) {
        const name = ctx.params.file!;
        ctx.set('Cache-Control', 'public, max-age=3600');
        ctx.type = assetTypes[name]!;
        ctx.body = asset(name);
      },
    },
  ];
}
