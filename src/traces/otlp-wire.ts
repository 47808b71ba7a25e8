// OTLP/protobuf export requests read straight from the wire into what the service keeps: ids as
// hex, attribute values as JSON. protobufjs's generated decoder first built an object for every
// key-value, value, 64-bit integer and id, which drafting then converted again; this reads each
// field once, in the shape drafting needs. protobufjs's own Reader does the byte-level work
// (varints, bounds, skipping unknown fields), so a body is accepted or refused as its generated
// decoder would: the same fields read, the same checks (UTF-8 included), the same nesting limit.
import protobuf from 'protobufjs/minimal.js';
import type { JsonValue } from './json-text.ts';
import { int64ToExact, type Int64 } from './nanos.ts';
import type { Attributes } from './span-type.ts';

/** An export request as the service reads it: ids in hex, attribute values as JSON. */
export interface ExportRequest {
  resourceSpans: ResourceSpans[];
}

export interface ResourceSpans {
  /** The resource's attributes ({} without a resource). */
  attributes: Attributes;
  scopeSpans: ScopeSpans[];
}

export interface ScopeSpans {
  scope: { name: string; version: string };
  spans: OtlpSpan[];
}

export interface OtlpSpan {
  /**
   * Its attributes, events, links and status as sent (the bytes from the first of these fields to
   * the last): what is only shown is kept so, and read again (readSpan) when shown.
   */
  shown: Uint8Array;
  /** Ids in lower-case hex, of whatever length they were sent ('' when absent). */
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  /** Nanoseconds since the epoch. */
  startTimeUnixNano: Int64;
  endTimeUnixNano: Int64;
  attributes: Attributes;
  events: OtlpEvent[];
  links: OtlpLink[];
  statusCode: number;
  statusMessage: string;
}

export interface OtlpEvent {
  timeUnixNano: Int64;
  name: string;
  attributes: Attributes;
}

export interface OtlpLink {
  traceId: string;
  spanId: string;
  traceState: string;
  attributes: Attributes;
}

/** Message nesting protobufjs refuses past (protoc's default recursion limit). */
const recursionLimit = 100;

// A tag is field number << 3 | wire type (0 varint, 1 fixed64, 2 length-delimited).
const varint = 0;
const fixed64 = 1;
const delimited = 2;
const tag = (field: number, wireType: number) => (field << 3) | wireType;

const zeroTime: Int64 = Object.freeze({ low: 0, high: 0 });
/** A span's fields that are only shown: attributes, events, links, status. */
const shownFields = new Set([tag(9, delimited), tag(11, delimited), tag(13, delimited), tag(15, delimited)]);
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * `strict` reads a body as received: strings must be valid UTF-8 and messages nest at most
 * `recursionLimit` deep. Bytes protobufjs encoded from OTLP/JSON are read without both checks,
 * as the JSON mapping never made them.
 */
export function readExportRequest(bytes: Uint8Array, strict: boolean): ExportRequest {
  return new WireReader(asBuffer(bytes), strict).request();
}

/** A span's fields as `OtlpSpan.shown` holds them (read as they were accepted when they arrived). */
export function readSpan(shown: Uint8Array): OtlpSpan {
  return new WireReader(asBuffer(shown), false).spanFields(0);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Each message reader reads one length-delimited message at `depth`: `enter` makes its end the
 * reader's end (nothing inside can run past it) and `leave` checks it ended there.
 */
class WireReader {
  private readonly r: protobuf.Reader;

  constructor(
    private readonly buffer: Buffer,
    private readonly strict: boolean,
  ) {
    this.r = protobuf.Reader.create(buffer);
  }

  request(): ExportRequest {
    const resourceSpans: ResourceSpans[] = [];
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, delimited)) resourceSpans.push(this.resourceSpans(1));
      else this.skip(t, 0);
    }
    return { resourceSpans };
  }

  private resourceSpans(depth: number): ResourceSpans {
    const outer = this.enter(depth);
    const found: ResourceSpans = { attributes: {}, scopeSpans: [] };
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      // A resource is a list of attributes; one sent twice merges, as protobuf merges a message.
      if (t === tag(1, delimited)) this.keyValueList(depth + 1, found.attributes);
      else if (t === tag(2, delimited)) found.scopeSpans.push(this.scopeSpans(depth + 1));
      else if (t === tag(3, delimited)) this.string();
      else this.skip(t, depth);
    }
    this.leave(outer);
    return found;
  }

  private scopeSpans(depth: number): ScopeSpans {
    const outer = this.enter(depth);
    const found: ScopeSpans = { scope: { name: '', version: '' }, spans: [] };
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, delimited)) this.scope(depth + 1, found.scope);
      else if (t === tag(2, delimited)) found.spans.push(this.span(depth + 1));
      else if (t === tag(3, delimited)) this.string();
      else this.skip(t, depth);
    }
    this.leave(outer);
    return found;
  }

  private scope(depth: number, scope: { name: string; version: string }): void {
    const outer = this.enter(depth);
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, delimited)) scope.name = this.string();
      else if (t === tag(2, delimited)) scope.version = this.string();
      // The scope's attributes are not kept, but they are checked as protobufjs checked them.
      else if (t === tag(3, delimited)) this.keyValue(depth + 1, {});
      else this.skip(t, depth);
    }
    this.leave(outer);
  }

  private span(depth: number): OtlpSpan {
    const outer = this.enter(depth);
    const span = this.spanFields(depth);
    this.leave(outer);
    return span;
  }

  /** The fields of a span message, up to the reader's end. */
  spanFields(depth: number): OtlpSpan {
    const span: OtlpSpan = {
      shown: this.buffer.subarray(0, 0),
      traceId: '',
      spanId: '',
      parentSpanId: '',
      name: '',
      kind: 0,
      startTimeUnixNano: zeroTime,
      endTimeUnixNano: zeroTime,
      attributes: {},
      events: [],
      links: [],
      statusCode: 0,
      statusMessage: '',
    };
    let shownStart = -1;
    let shownEnd = -1;
    while (this.r.pos < this.r.len) {
      const fieldStart = this.r.pos;
      const t = this.r.tag();
      switch (t) {
        case tag(1, delimited):
          span.traceId = this.hex();
          break;
        case tag(2, delimited):
          span.spanId = this.hex();
          break;
        case tag(3, delimited):
          this.string();
          break;
        case tag(4, delimited):
          span.parentSpanId = this.hex();
          break;
        case tag(5, delimited):
          span.name = this.string();
          break;
        case tag(6, varint):
          span.kind = this.r.int32();
          break;
        case tag(7, fixed64):
          span.startTimeUnixNano = this.fixed64();
          break;
        case tag(8, fixed64):
          span.endTimeUnixNano = this.fixed64();
          break;
        case tag(9, delimited):
          this.keyValue(depth + 1, span.attributes);
          break;
        case tag(11, delimited):
          span.events.push(this.event(depth + 1));
          break;
        case tag(13, delimited):
          span.links.push(this.link(depth + 1));
          break;
        case tag(15, delimited):
          this.status(depth + 1, span);
          break;
        default:
          this.skip(t, depth);
      }
      if (shownFields.has(t)) {
        if (shownStart < 0) shownStart = fieldStart;
        shownEnd = this.r.pos;
      }
    }
    if (shownStart >= 0) span.shown = this.buffer.subarray(shownStart, shownEnd);
    return span;
  }

  private event(depth: number): OtlpEvent {
    const outer = this.enter(depth);
    const event: OtlpEvent = { timeUnixNano: zeroTime, name: '', attributes: {} };
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, fixed64)) event.timeUnixNano = this.fixed64();
      else if (t === tag(2, delimited)) event.name = this.string();
      else if (t === tag(3, delimited)) this.keyValue(depth + 1, event.attributes);
      else this.skip(t, depth);
    }
    this.leave(outer);
    return event;
  }

  private link(depth: number): OtlpLink {
    const outer = this.enter(depth);
    const link: OtlpLink = { traceId: '', spanId: '', traceState: '', attributes: {} };
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, delimited)) link.traceId = this.hex();
      else if (t === tag(2, delimited)) link.spanId = this.hex();
      else if (t === tag(3, delimited)) link.traceState = this.string();
      else if (t === tag(4, delimited)) this.keyValue(depth + 1, link.attributes);
      else this.skip(t, depth);
    }
    this.leave(outer);
    return link;
  }

  private status(depth: number, span: OtlpSpan): void {
    const outer = this.enter(depth);
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(2, delimited)) span.statusMessage = this.string();
      else if (t === tag(3, varint)) span.statusCode = this.r.int32();
      else this.skip(t, depth);
    }
    this.leave(outer);
  }

  /** One KeyValue into `attributes`: a repeated key keeps its last value (and its first place). */
  private keyValue(depth: number, attributes: Attributes): void {
    const outer = this.enter(depth);
    let key = '';
    let value: JsonValue = null;
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, delimited)) key = this.string();
      else if (t === tag(2, delimited)) value = this.anyValue(depth + 1);
      else this.skip(t, depth);
    }
    this.leave(outer);
    attributes[key] = value;
  }

  /** An AnyValue as JSON: the member of its oneof sent last, or null when none is. */
  private anyValue(depth: number): JsonValue {
    const outer = this.enter(depth);
    let value: JsonValue = null;
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      switch (t) {
        case tag(1, delimited):
          value = this.string();
          break;
        case tag(2, varint):
          value = this.r.bool();
          break;
        case tag(3, varint):
          value = int64ToExact(this.r.int64());
          break;
        case tag(4, fixed64):
          value = this.r.double();
          break;
        case tag(5, delimited):
          value = this.arrayValue(depth + 1);
          break;
        case tag(6, delimited):
          value = {};
          this.keyValueList(depth + 1, value);
          break;
        case tag(7, delimited):
          value = this.bytesAs('base64');
          break;
        default:
          this.skip(t, depth);
      }
    }
    this.leave(outer);
    return value;
  }

  private arrayValue(depth: number): JsonValue[] {
    const outer = this.enter(depth);
    const values: JsonValue[] = [];
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, delimited)) values.push(this.anyValue(depth + 1));
      else this.skip(t, depth);
    }
    this.leave(outer);
    return values;
  }

  private keyValueList(depth: number, values: Attributes): void {
    const outer = this.enter(depth);
    while (this.r.pos < this.r.len) {
      const t = this.r.tag();
      if (t === tag(1, delimited)) this.keyValue(depth + 1, values);
      else this.skip(t, depth);
    }
    this.leave(outer);
  }

  /** Starts the length-delimited message at the reader; returns the end to restore. */
  private enter(depth: number): number {
    if (this.strict && depth > recursionLimit) throw Error('max depth exceeded');
    const r = this.r;
    const end = r.size() + r.pos;
    if (end > r.len) throw RangeError('index out of range');
    const outer = r.len;
    r.len = end;
    return outer;
  }

  private leave(outer: number): void {
    if (this.r.pos !== this.r.len) throw RangeError('index out of range');
    this.r.len = outer;
  }

  /**
   * A string field. Node decodes it, an invalid byte as U+FFFD; as many characters as bytes and no
   * U+FFFD is plain ASCII. Anything else is decoded again where `strict`, to refuse invalid UTF-8
   * as protobuf does.
   */
  private string(): string {
    const [start, end] = this.delimitedBytes();
    const text = this.buffer.toString('utf8', start, end);
    if (!this.strict || (text.length === end - start && !text.includes('\ufffd'))) return text;
    return strictUtf8.decode(this.buffer.subarray(start, end));
  }

  /** A bytes field (an id) as lower-case hex, whatever its length. */
  private hex(): string {
    return this.bytesAs('hex');
  }

  private bytesAs(encoding: 'hex' | 'base64'): string {
    const [start, end] = this.delimitedBytes();
    return this.buffer.toString(encoding, start, end);
  }

  /** The bounds of the length-delimited bytes at the reader, which moves past them. */
  private delimitedBytes(): [start: number, end: number] {
    const r = this.r;
    const length = r.size();
    const start = r.pos;
    r.skip(length);
    return [start, start + length];
  }

  /** A fixed64 as its halves (little-endian: the low half first), without protobufjs's Long. */
  private fixed64(): Int64 {
    const low = this.r.fixed32();
    return { low, high: this.r.fixed32() };
  }

  private skip(t: number, depth: number): void {
    this.r.skipType(t & 7, depth, t >>> 3);
  }
}
