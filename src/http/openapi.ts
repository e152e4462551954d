import { OpenAPIHono, z, type RouteConfig } from "@hono/zod-openapi";
import type { AppEnv } from "./context";
import { throwOnInvalid } from "./validation";

/** Every router of the service is made here, so that validation failures share one 400 shape. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: (result) => throwOnInvalid(result) });
}

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ example: "Bad Request" }),
    message: z.string().openapi({ example: "Invalid body: name: Required" }),
  })
  .openapi("Error");

const errorContent = { "application/json": { schema: ErrorSchema } };

/** The errors every authenticated route can answer with; routes add their own (404, 409...). */
export const commonErrors = {
  400: { description: "Invalid request: the message names each invalid field", content: errorContent },
  401: { description: "Missing or invalid API key", content: errorContent },
  403: { description: "The key may not call this endpoint or act on this team", content: errorContent },
  429: { description: "Rate limit exceeded", content: errorContent },
} satisfies RouteConfig["responses"];

export const notFoundError = { 404: { description: "No such record in this team", content: errorContent } };
export const conflictError = { 409: { description: "The request conflicts with the current state", content: errorContent } };

/** A required JSON body: a missing or non-JSON body is a 400/415, never skipped. */
export function jsonBody<T extends z.ZodType>(schema: T, description?: string) {
  return { required: true, description, content: { "application/json": { schema } } };
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

export const security = [{ ApiKey: [] }];
