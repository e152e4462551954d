import { z } from "@hono/zod-openapi";
import { ApiError } from "./errors";

/** A zod failure as the 400 of the envelope: the message names every invalid or missing field. */
export function validationError(error: z.ZodError, source: string): ApiError {
  const fields = error.issues.flatMap((issue) => {
    const at = issue.path.map(String);
    // An unknown key is named itself, not the object that holds it.
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ field: [...at, key].join("."), message: "Unknown field" }));
    }
    const missing = issue.code === "invalid_type" && / received undefined$/.test(issue.message);
    return [{ field: at.length ? at.join(".") : source, message: missing ? "Required" : issue.message }];
  });
  const summary = fields.map((f) => `${f.field}: ${f.message}`).join("; ");
  return new ApiError(400, `Invalid ${source}: ${summary}`, { fields });
}

/** OpenAPIHono's hook: throw so that the one error handler writes the response. */
export function throwOnInvalid(
  result: { success: true } | { success: false; error: z.ZodError; target: string },
): void {
  if (!result.success) throw validationError(result.error, result.target === "json" ? "body" : result.target);
}

/**
 * A JSON object whose keys the client chooses (metadata, payloads). zod cannot copy a "__proto__"
 * key into the record it builds (assigning it would replace the prototype), so it drops the entry
 * without an issue: the client would get a 200 and silently lose it. Such a key is a 400 instead.
 */
export function clientKeyed<T extends z.ZodType>(record: T) {
  return z.preprocess((value, ctx) => {
    if (value && typeof value === "object" && Object.hasOwn(value, "__proto__")) {
      ctx.addIssue({ code: "custom", path: ["__proto__"], message: 'the key "__proto__" is not allowed', input: value });
    }
    return value;
  }, record);
}
