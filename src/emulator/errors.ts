/**
 * Errors the emulator answers with. Each carries the HTTP status and a stable code; the server
 * turns them into the spec's body `{ error: { message } }`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string) {
    super(400, 'BAD_REQUEST', message);
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'missing or invalid API key: send Authorization: Bearer <API_KEY>') {
    super(401, 'UNAUTHORIZED', message);
  }
}

/** The spec leaves the status of a missing grant open; the emulator answers 403. */
export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, 'FORBIDDEN', message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, 'NOT_FOUND', message);
  }
}

export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super(413, 'PAYLOAD_TOO_LARGE', message);
  }
}
