// Date-times as Django parses them: ISO 8601 with a 'T' or a space, seconds and fractions
// optional, an offset or 'Z' optional (no offset means UTC, the service's time zone).
const dateTimePattern =
  /^(\d{4})-(\d{1,2})-(\d{1,2})[T ](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:[.,](\d{1,9}))?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i;
const datePattern = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;

export function isDateTime(value: string): boolean {
  return parseDateTime(value) !== undefined;
}

export function isDateOrDateTime(value: string): boolean {
  return parseDateOrDateTime(value) !== undefined;
}

/** Milliseconds since the epoch, or undefined when `value` is not a valid date-time. */
export function parseDateTime(value: string): number | undefined {
  const match = dateTimePattern.exec(value.trim());
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second = '0', fraction = '0', zone = 'Z'] = match;
  if (!validDate(+year!, +month!, +day!) || +hour! > 23 || +minute! > 59 || +second > 59) return undefined;
  const utc = Date.UTC(+year!, +month! - 1, +day!, +hour!, +minute!, +second, Math.floor(+`0.${fraction}` * 1000));
  return utc - zoneOffsetMinutes(zone) * 60_000;
}

/** A date alone means its midnight (UTC), as django-filter's DateTimeFilter reads it. */
export function parseDateOrDateTime(value: string): number | undefined {
  const match = datePattern.exec(value.trim());
  if (!match) return parseDateTime(value);
  const [, year, month, day] = match;
  return validDate(+year!, +month!, +day!) ? Date.UTC(+year!, +month! - 1, +day!) : undefined;
}

/** The service's own timestamp form, which sorts as it reads: 2026-11-21T05:25:00.123Z. */
export function toTimestamp(milliseconds: number): string {
  return new Date(milliseconds).toISOString();
}

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate() && year >= 1 && year <= 9999;
}

function zoneOffsetMinutes(zone: string): number {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone[0] === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  return sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0'));
}
