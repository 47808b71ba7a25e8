// Holds every response a test receives (through Client) to the API document: its status must be
// one the document declares for that operation, its media type one declared for that status, and
// a JSON body must match the declared schema. The document is the one the service serves, built
// once per process from an in-memory service; the validators are compiled once per schema.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { pino } from 'pino';
import type { OpenApiDocument, Operation, ResponseObject } from '../../src/http/openapi.ts';
import { apiDocument } from '../../src/app.ts';
import { createService } from '../../src/service.ts';

export interface ReceivedResponse {
  method: string;
  /** The requested path, with or without a query string. */
  path: string;
  status: number;
  contentType: string;
  text: string;
  body: unknown;
}

interface PathTemplate {
  template: string;
  pattern: RegExp;
  /** Literal segments: the more, the more specific ("/api/traces/services/" before "/api/traces/{trace_id}/"). */
  literals: number;
  operations: OpenApiDocument['paths'][string];
}

const documentUri = 'openapi';

interface Declared {
  /** "GET /api/agents/{id}/ 404", for messages. */
  where: string;
  response: ResponseObject;
  /** JSON pointer to the response in the document. */
  pointer: string;
}

export class DocumentedResponses {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly templates: PathTemplate[];

  constructor(readonly document: OpenApiDocument) {
    addFormats.default(this.ajv);
    this.ajv.addSchema(document, documentUri);
    this.templates = Object.entries(document.paths)
      .map(([template, operations]) => ({
        template,
        pattern: templatePattern(template),
        literals: template.split('/').filter((segment) => segment !== '' && !segment.startsWith('{')).length,
        operations,
      }))
      .sort((a, b) => b.literals - a.literals);
  }

  /** Throws, naming the operation, the status and what broke, unless the response is as documented. */
  check(received: ReceivedResponse): void {
    const { where, response, pointer } = this.declared(received);
    if (!response.content) {
      if (received.text !== '') throw new Error(`${where}: the document declares no body, but one came: ${received.text.slice(0, 200)}`);
      return;
    }
    const mediaType = received.contentType.split(';')[0]!.trim().toLowerCase();
    const media = response.content[mediaType];
    if (!media) throw new Error(`${where}: answered ${mediaType || 'no media type'}, the document declares ${Object.keys(response.content).join(', ')}`);
    // Bodies JSON Schema cannot describe (protobuf, HTML, static files) are declared by media type only.
    if (!media.schema) return;
    const validate = this.validator(`${pointer}/content/${escapePointer(mediaType)}/schema`);
    if (!validate(received.body)) {
      const errors = this.ajv.errorsText(validate.errors, { dataVar: 'body', separator: '; ' });
      throw new Error(`${where}: the body does not match its schema: ${errors}\nbody: ${received.text.slice(0, 500)}`);
    }
  }

  /** The documented response for a request's method, path and status, and where it is in the document. */
  private declared(received: ReceivedResponse): Declared {
    const method = received.method.toUpperCase();
    const path = received.path.split('?')[0]!;
    const status = received.status;
    const template = this.templates.find((candidate) => candidate.pattern.test(path));
    // An unknown path is 404, and a method a path does not offer 405: responses every path shares.
    if (!template) {
      if (status !== 404) throw new Error(`${method} ${path} answered ${status}: no documented path matches it, so only 404 may answer`);
      return this.shared('NotFound', `${method} ${path} 404`);
    }
    const where = `${method} ${template.template} ${status}`;
    const operation: Operation | undefined = template.operations[method.toLowerCase() as keyof PathTemplate['operations']];
    if (!operation) {
      if (status !== 405) throw new Error(`${where}: the path documents no ${method}, so only 405 may answer`);
      return this.shared('MethodNotAllowed', where);
    }
    const declared = operation.responses[String(status)];
    if (!declared) throw new Error(`${where}: the document does not declare this status (it declares ${Object.keys(operation.responses).join(', ')})`);
    if ('$ref' in declared) return this.shared(declared.$ref.slice('#/components/responses/'.length), where);
    return { where, response: declared, pointer: `/paths/${escapePointer(template.template)}/${method.toLowerCase()}/responses/${status}` };
  }

  private shared(name: string, where: string): Declared {
    return { where, response: this.document.components.responses[name]!, pointer: `/components/responses/${name}` };
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) this.validators.set(pointer, (validate = this.ajv.compile({ $ref: `${documentUri}#${pointer}` })));
    return validate;
  }
}

function templatePattern(template: string): RegExp {
  const escaped = template
    .replace(/\/$/, '')
    .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
    .replace(/\{\w+\}/g, '[^/]+');
  return new RegExp(`^${escaped}/?$`);
}

/** A JSON pointer segment (RFC 6901). */
export function escapePointer(part: string): string {
  return part.replace(/~/g, '~0').replace(/\//g, '~1');
}

let shared: Promise<DocumentedResponses> | undefined;

/** The checker for this process, from the document an in-memory service generates. */
export function documentedResponses(): Promise<DocumentedResponses> {
  shared ??= (async () => {
    const service = await createService({ storage: 'memory', logger: pino({ level: 'silent' }) });
    try {
      return new DocumentedResponses(apiDocument(service.deps));
    } finally {
      await service.close();
    }
  })();
  return shared;
}
