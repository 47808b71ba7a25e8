// The OTLP/protobuf wire reader against what protobufjs's generated decoder made of the same bytes:
// every field the service keeps, unknown fields and wrong wire types skipped, a repeated key's
// last value, and the same refusals (truncation, invalid UTF-8, nesting).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import protobuf from 'protobufjs';
import { decodeExportRequest, exportRequestType, OtlpDecodeError } from '../../src/traces/otlp.ts';
import { shownDetail } from '../../src/traces/span-record.ts';
import { draftSpans } from '../../src/traces/spans.ts';

const span = {
  traceId: Buffer.from('0102030405060708090a0b0c0d0e0f10', 'hex'),
  spanId: Buffer.from('1112131415161718', 'hex'),
  parentSpanId: Buffer.from('2122232425262728', 'hex'),
  traceState: 'vendor=1',
  name: 'llm.call',
  kind: 3,
  startTimeUnixNano: '1767225600123456789',
  endTimeUnixNano: '1767225600223456789',
  attributes: [
    { key: 'text', value: { stringValue: 'héllo ✓ 𝄞' } },
    { key: 'flag', value: { boolValue: true } },
    { key: 'big', value: { intValue: '-9007199254740993' } },
    { key: 'small', value: { intValue: -42 } },
    { key: 'ratio', value: { doubleValue: 0.25 } },
    { key: 'raw', value: { bytesValue: Buffer.from([0, 255, 7]) } },
    { key: 'list', value: { arrayValue: { values: [{ stringValue: 'a' }, { kvlistValue: { values: [{ key: 'k', value: { intValue: 1 } }] } }] } } },
    { key: 'nothing', value: {} },
    { key: 'text', value: { stringValue: 'last wins' } },
  ],
  events: [{ timeUnixNano: '1767225600150000000', name: 'retry', attributes: [{ key: 'attempt', value: { intValue: 2 } }] }],
  links: [{ traceId: Buffer.from('aa'.repeat(16), 'hex'), spanId: Buffer.from('bb'.repeat(8), 'hex'), traceState: 'x=y', attributes: [] }],
  status: { code: 2, message: 'rate limited' },
};

const spanBytes = exportRequestType().lookupType('opentelemetry.proto.trace.v1.Span').encode({ ...span, attributes: [] }).finish();

function body(spanFields: object = span): Buffer {
  const message = exportRequestType().fromObject({
    resourceSpans: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] },
      scopeSpans: [{ scope: { name: 'scope', version: '2.0' }, spans: [spanFields] }],
    }],
  });
  return Buffer.from(exportRequestType().encode(message).finish());
}

test('every field the service keeps reads as protobufjs decoded it', () => {
  const [draft] = draftSpans(decodeExportRequest(body(), 'protobuf'), 8).spans;
  assert.equal(
    [draft!.trace_id, draft!.span_id, draft!.parent_span_id, draft!.name, draft!.kind, draft!.status_code, draft!.duration_ns],
    ['0102030405060708090a0b0c0d0e0f10', '1112131415161718', '2122232425262728', 'llm.call', 3, 2, 100_000_000],
  );
  assert.is(draft!.start_time_ns, (1767225600123456789n).toString(16).padStart(16, '0'));
  // What is kept of a span's detail reads back, when shown, as it was sent.
  const detail = shownDetail({ otlp: draft!.otlp, scope_name: draft!.scope.name, scope_version: draft!.scope.version });
  assert.equal(detail, {
    status_message: 'rate limited',
    attributes: {
      text: 'last wins', flag: true, big: -9007199254740993n, small: -42, ratio: 0.25, raw: 'AP8H',
      list: ['a', { k: 1 }], nothing: null,
    },
    events: [{ name: 'retry', time_ns: 1767225600150000000n, attributes: { attempt: 2 } }],
    links: [{ trace_id: 'aa'.repeat(16), span_id: 'bb'.repeat(8), trace_state: 'x=y', attributes: {} }],
    scope_name: 'scope',
    scope_version: '2.0',
  });
  assert.equal(Object.keys(detail.attributes)[0], 'text');
  assert.is(draft!.resource.serviceName, 'svc');
});

test('unknown fields and known fields of another wire type are skipped', () => {
  const extra = protobuf.Writer.create();
  extra.uint32((99 << 3) | 0).uint32(12345); // unknown varint
  extra.uint32((5 << 3) | 0).uint32(7); // `name` as a varint: not a name
  extra.uint32((100 << 3) | 2).bytes(Buffer.from('opaque')); // unknown bytes
  const [draft] = draftSpans(decodeExportRequest(requestOf(Buffer.concat([spanBytes, extra.finish()])), 'protobuf'), 8).spans;
  assert.is(draft!.name, 'llm.call');
  assert.is(draft!.span_id, '1112131415161718');
});

test('truncated bodies, invalid UTF-8 and nesting past protobuf limit are refused as protobufjs refused them', () => {
  const refused = (bytes: Uint8Array, pattern: RegExp) =>
    assert.throws(() => decodeExportRequest(bytes, 'protobuf'), (error: unknown) => error instanceof OtlpDecodeError && pattern.test(error.message));
  const whole = body();
  refused(whole.subarray(0, whole.length - 3), /index out of range/);
  // A lone continuation byte is as many characters as bytes once decoded: it is still refused.
  const invalid = body({ ...span, name: 'ok-name' });
  invalid[invalid.indexOf('ok-name') + 2] = 0x80;
  refused(invalid, /not valid/);
  assert.match(protobufjsRefuses(invalid) ?? '', /not valid/);
  const deep = withAttribute('deep', nestedArrays(60));
  refused(deep, /max depth exceeded/);
  assert.is(protobufjsRefuses(deep), 'max depth exceeded');
});

/** An AnyValue of `depth` arrays, each holding the next (protobufjs's fromObject refuses to build it). */
function nestedArrays(depth: number): Uint8Array {
  let value = protobuf.Writer.create().uint32((1 << 3) | 2).string('deep').finish();
  for (let i = 0; i < depth; i++) {
    const array = protobuf.Writer.create().uint32((1 << 3) | 2).bytes(value).finish();
    value = protobuf.Writer.create().uint32((5 << 3) | 2).bytes(array).finish();
  }
  return value;
}

/** The test span with one more attribute, its value already encoded. */
function withAttribute(key: string, value: Uint8Array): Buffer {
  const keyValue = protobuf.Writer.create().uint32((1 << 3) | 2).string(key).uint32((2 << 3) | 2).bytes(value).finish();
  return requestOf(Buffer.concat([spanBytes, protobuf.Writer.create().uint32((9 << 3) | 2).bytes(keyValue).finish()]));
}

/** An export request of one span given as its encoded message (no resource, no scope). */
function requestOf(spanMessage: Uint8Array): Buffer {
  const scopeSpans = protobuf.Writer.create().uint32((2 << 3) | 2).bytes(spanMessage).finish();
  const resourceSpans = protobuf.Writer.create().uint32((2 << 3) | 2).bytes(scopeSpans).finish();
  return Buffer.from(protobuf.Writer.create().uint32((1 << 3) | 2).bytes(resourceSpans).finish());
}

function protobufjsRefuses(bytes: Uint8Array): string | null {
  try {
    exportRequestType().decode(bytes);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

test.run();
