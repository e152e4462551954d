import { z } from "@hono/zod-openapi";
import { ApiError } from "./errors";

/** A zod failure as the 400 of the envelope: the message names every invalid or missing field. */
export function validationError(error: z.ZodError, source: string): ApiError {
  const fields = error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join(".") : source,
    message: issue.message,
  }));
  const summary = fields.map((f) => `${f.field}: ${f.message}`).join("; ");
  return new ApiError(400, `Invalid ${source}: ${summary}`, { fields });
}

/** OpenAPIHono's hook: throw so that the one error handler writes the response. */
export function throwOnInvalid(
  result: { success: true } | { success: false; error: z.ZodError; target: string },
): void {
  if (!result.success) throw validationError(result.error, result.target === "json" ? "body" : result.target);
}
