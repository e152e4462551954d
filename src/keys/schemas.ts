import { z } from "@hono/zod-openapi";

export const KeyInput = z
  .object({
    type: z.enum(["publishable", "secret"]).openapi({ description: "publishable (pk_live_) or secret (sk_live_)" }),
    name: z.string().trim().max(200).optional(),
    expiresAt: z.iso.datetime().optional().openapi({ description: "Optional expiry; the key is unknown after it." }),
  })
  .strict()
  .openapi("KeyInput");

export const KeySummary = z
  .object({
    id: z.string(),
    type: z.enum(["publishable", "secret"]),
    name: z.string().nullable(),
    prefix: z.string().openapi({ description: "The first characters of the key, to recognise it" }),
    createdAt: z.string(),
    lastUsedAt: z.string().nullable(),
    expiresAt: z.string().nullable(),
  })
  .openapi("KeySummary");

export const CreatedKey = KeySummary.extend({
  key: z.string().openapi({ description: "The key itself. Shown once: store it now." }),
}).openapi("CreatedKey");

export const KeyParams = z.object({
  teamId: z.string().openapi({ param: { name: "teamId", in: "path" } }),
  keyId: z.string().openapi({ param: { name: "keyId", in: "path" } }),
});
