import type { ContentfulStatusCode } from "hono/utils/http-status";

/** The `error` field of the envelope, by status, as SPEC.md names them. */
export const STATUS_NAMES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

export type ErrorBody = { error: string; message: string } & Record<string, unknown>;

/**
 * The one error type of the service. Throw it anywhere; app.onError turns it into
 * `{error, message, ...extra}` with its status. Messages are written for the API user:
 * never put internals (SQL, stack, upstream bodies) in them.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(): ErrorBody {
    return { error: STATUS_NAMES[this.status] ?? "Error", message: this.message, ...this.extra };
  }
}

export const badRequest = (message: string, extra?: Record<string, unknown>) => new ApiError(400, message, extra);
export const forbidden = (message: string, extra?: Record<string, unknown>) => new ApiError(403, message, extra);
export const notFound = (what: string) => new ApiError(404, `${what} not found.`);
export const conflict = (message: string, extra?: Record<string, unknown>) => new ApiError(409, message, extra);

/** SPEC.md: the invalid-key 401 body holds only `message`. */
export class InvalidKeyError extends ApiError {
  constructor() {
    super(401, "Invalid API key. Pass a valid key in the x-api-key header.");
  }
  override body(): ErrorBody {
    return { message: this.message } as ErrorBody;
  }
}
