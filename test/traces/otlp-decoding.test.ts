// OTLP decoding as the pure pieces see it: OTLP/JSON's spellings, and what is not OTLP at all.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nanosToHex } from '../../src/traces/nanos.ts';
import { decodeExportRequest, OtlpDecodeError } from '../../src/traces/otlp.ts';
import { shownDetail } from '../../src/traces/span-record.ts';
import { draftSpans } from '../../src/traces/spans.ts';

test('OTLP/JSON accepts snake_case field names, enum names and 64-bit integers as strings', () => {
  const body = JSON.stringify({
    resource_spans: [{
      resource: { attributes: [{ key: 'service.name', value: { string_value: 'svc' } }] },
      scope_spans: [{
        spans: [{
          trace_id: '0102030405060708090a0b0c0d0e0f10', span_id: '0102030405060708', name: 'snake',
          kind: 'SPAN_KIND_CLIENT', start_time_unix_nano: '1767225600123456789', end_time_unix_nano: '1767225600223456789',
          attributes: [{ key: 'big', value: { int_value: '9007199254740993' } }, { key: 'list', value: { array_value: { values: [{ bool_value: true }] } } }],
          status: { code: 'STATUS_CODE_ERROR' },
        }],
      }],
    }],
  });
  const [span] = draftSpans(decodeExportRequest(Buffer.from(body), 'json'), 8).spans;
  assert.is(span!.trace_id, '0102030405060708090a0b0c0d0e0f10');
  assert.is(span!.kind, 3);
  assert.is(span!.status_code, 2);
  assert.is(span!.start_time_ns, nanosToHex(1767225600123456789n));
  assert.is(span!.duration_ns, 100_000_000);
  assert.equal(shownDetail({ otlp: span!.otlp, scope_name: '', scope_version: '' }).attributes, { big: 9007199254740993n, list: [true] });
  assert.is(span!.resource.serviceName, 'svc');
});

test('an empty body is an empty export; anything else undecodable is an OtlpDecodeError', () => {
  assert.equal(decodeExportRequest(Buffer.alloc(0), 'json').resourceSpans, []);
  assert.equal(decodeExportRequest(Buffer.alloc(0), 'protobuf').resourceSpans, []);
  assert.throws(() => decodeExportRequest(Buffer.from('{'), 'json'), (error: unknown) => error instanceof OtlpDecodeError);
  assert.throws(() => decodeExportRequest(Buffer.from([0x0a, 0x05, 0x01]), 'protobuf'), (error: unknown) => error instanceof OtlpDecodeError);
});

test('OTLP/JSON integers out of their range, or no integers at all, and enums neither a name nor an integer, are refused (protobufjs would wrap them or read 0); the edges are kept', () => {
  const request = (span: object, attribute: object = { intValue: '1' }) => Buffer.from(JSON.stringify({
    resourceSpans: [{ scopeSpans: [{ spans: [{
      traceId: '0102030405060708090a0b0c0d0e0f10', spanId: '0102030405060708', name: 'n', startTimeUnixNano: '1', endTimeUnixNano: '2',
      attributes: [{ key: 'a', value: { arrayValue: { values: [attribute] } } }], ...span,
    }] }] }],
  }));
  const refusals: [object, object | undefined, string][] = [
    [{ startTimeUnixNano: '18446744073709551617' }, undefined, 'resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: "18446744073709551617" is not a fixed64'],
    [{ endTimeUnixNano: '99999999999999999999999' }, undefined, 'endTimeUnixNano'],
    [{ startTimeUnixNano: 'abc' }, undefined, 'startTimeUnixNano: "abc"'],
    [{ startTimeUnixNano: '-1' }, undefined, 'startTimeUnixNano: "-1"'],
    [{ startTimeUnixNano: 1.5 }, undefined, 'startTimeUnixNano: 1.5'],
    [{ droppedAttributesCount: 2 ** 32 }, undefined, 'droppedAttributesCount: 4294967296 is not a uint32'],
    [{}, { intValue: '9223372036854775808' }, 'attributes[0].value.arrayValue.values[0].intValue: "9223372036854775808" is not a int64'],
    [{}, { intValue: 'x' }, 'intValue: "x"'],
  ];
  for (const [span, attribute, message] of refusals) {
    assert.throws(() => decodeExportRequest(request(span, attribute), 'json'), (error: unknown) => error instanceof OtlpDecodeError && error.message.includes(message), message);
  }
  const edges = decodeExportRequest(request({ startTimeUnixNano: '18446744073709551615', endTimeUnixNano: '18446744073709551615', droppedAttributesCount: 4294967295 }, { intValue: '-9223372036854775808' }), 'json');
  const [span] = draftSpans(edges, 8).spans;
  assert.is(span!.start_time_ns, nanosToHex(18446744073709551615n));
  assert.equal(shownDetail({ otlp: span!.otlp, scope_name: '', scope_version: '' }).attributes, { a: [-9223372036854775808n] });
  const [numbers] = draftSpans(decodeExportRequest(request({ startTimeUnixNano: 2 ** 53, endTimeUnixNano: 2 ** 53 + 2 }, { intValue: -5 }), 'json'), 8).spans;
  assert.equal([numbers!.start_time_ns, numbers!.duration_ns], [nanosToHex(2n ** 53n), 2], 'integral numbers are taken too');

  // Enums: a name, or an integer (a number or a decimal string); protobufjs read "2" or an unknown name as 0.
  for (const [kind, code, expected] of [['2', '2', [2, 2]], [3, 'STATUS_CODE_ERROR', [3, 2]], ['SPAN_KIND_CLIENT', 1, [3, 1]]] as const) {
    const [enums] = draftSpans(decodeExportRequest(request({ kind, status: { code } }), 'json'), 8).spans;
    assert.equal([enums!.kind, enums!.status_code], expected, `kind ${kind}, code ${code}`);
  }
  for (const [span, message] of [[{ kind: 'BOGUS' }, 'spans[0].kind: "BOGUS" is not a SpanKind'], [{ kind: 1.5 }, 'kind: 1.5'], [{ status: { code: true } }, 'status.code: true is not a StatusCode']] as const) {
    assert.throws(() => decodeExportRequest(request(span), 'json'), (error: unknown) => error instanceof OtlpDecodeError && error.message.includes(message), message);
  }
});

test.run();
