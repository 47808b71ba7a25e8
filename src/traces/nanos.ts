// Nanosecond timestamps are 64-bit: past 2^53 a JavaScript number cannot hold them exactly. The
// service keeps them as 16-digit hex strings, which sort as the numbers do (so they serve as key
// parts and compare as strings), and turns them into bigint only to write them out.

/** A 64-bit integer as its two 32-bit halves (as protobufjs's Long holds one too). */
export interface Int64 {
  low: number;
  high: number;
}

const uint64Max = (1n << 64n) - 1n;

export const nanosHexMin = '0000000000000000';
export const nanosHexMax = 'ffffffffffffffff';

export function nanosToHex(nanos: bigint): string {
  const clamped = nanos < 0n ? 0n : nanos > uint64Max ? uint64Max : nanos;
  return clamped.toString(16).padStart(16, '0');
}

export function hexToNanos(hex: string): bigint {
  return BigInt(`0x${hex}`);
}

/** An unsigned 64-bit protobuf integer (fixed64) as hex, straight from its two halves. */
export function uint64ToHex(value: Int64 | number): string {
  if (typeof value === 'number') return nanosToHex(BigInt(Math.trunc(value)));
  return hex32(value.high) + hex32(value.low);
}

/** Two hex digits for each byte value: two times per span, a table beats formatting numbers ~3x. */
const hexOfByte = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

function hex32(value: number): string {
  return hexOfByte[value >>> 24]! + hexOfByte[(value >>> 16) & 0xff]! + hexOfByte[(value >>> 8) & 0xff]! + hexOfByte[value & 0xff]!;
}

export function uint64ToBigInt(value: Int64 | number): bigint {
  if (typeof value === 'number') return BigInt(Math.trunc(value));
  return (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
}

/**
 * `end - start` in nanoseconds, 0 when the end is not after the start. Computed on the two 32-bit
 * halves, so it is exact up to 2^53 ns (104 days) without bigint arithmetic on the hot path.
 */
export function uint64Difference(end: Int64 | number, start: Int64 | number): number {
  const difference =
    typeof end === 'number' || typeof start === 'number'
      ? Number(uint64ToBigInt(end) - uint64ToBigInt(start))
      : ((end.high >>> 0) - (start.high >>> 0)) * 4294967296 + ((end.low >>> 0) - (start.low >>> 0));
  return difference > 0 ? difference : 0;
}

/** A signed 64-bit integer: a number when it is exact as one, else a bigint. */
export function int64ToExact(value: Int64 | number): number | bigint {
  if (typeof value === 'number') return value;
  const exact = BigInt.asIntN(64, uint64ToBigInt(value));
  return exact >= BigInt(Number.MIN_SAFE_INTEGER) && exact <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(exact) : exact;
}

/** Nanoseconds since the epoch for a time in milliseconds since the epoch. */
export function millisToNanos(milliseconds: number): bigint {
  return BigInt(Math.trunc(milliseconds)) * 1_000_000n;
}
