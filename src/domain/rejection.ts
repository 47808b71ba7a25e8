// Why a command was refused, in domain terms. The HTTP layer maps each kind to its status and
// DRF body; the domain never knows about status codes.

/** DRF's error map: field -> messages, or nested maps / per-item lists for nested data. */
export type FieldErrors = { [field: string]: FieldError };
export type FieldError = string[] | FieldErrors | FieldErrors[];

export type Rejection =
  | { kind: 'invalid'; fields: FieldErrors }
  | { kind: 'not_found' }
  | { kind: 'forbidden'; detail: string }
  | { kind: 'conflict'; detail: string };

export class Rejected extends Error {
  constructor(readonly rejection: Rejection) {
    super(rejection.kind === 'invalid' ? 'invalid' : rejection.kind);
    this.name = 'Rejected';
  }
}

export function invalid(fields: FieldErrors): Rejected {
  return new Rejected({ kind: 'invalid', fields });
}

export function notFound(): Rejected {
  return new Rejected({ kind: 'not_found' });
}

export function forbidden(detail: string): Rejected {
  return new Rejected({ kind: 'forbidden', detail });
}

export function conflict(detail: string): Rejected {
  return new Rejected({ kind: 'conflict', detail });
}

/** DRF's message for a reference to a record that does not exist or is not visible. */
export function invalidPk(value: unknown): string {
  return `Invalid pk "${String(value)}" - object does not exist.`;
}
