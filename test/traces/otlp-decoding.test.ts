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

test.run();
