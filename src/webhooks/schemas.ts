import { z } from "@hono/zod-openapi";
import { ATTEMPT_TRIGGERS, DELIVERY_STATES } from "../db/schema";
import { EVENT_TYPES } from "../events/emit";
import { clientKeyed } from "../http/validation";
import { RESPONSE_BODY_LIMIT } from "./send";
import { secretProblem } from "./signature";
import { MAX_URL_LENGTH } from "./url-guard";

export const WILDCARD = "*" as const;
export const CATALOGUE_TEXT = [...EVENT_TYPES, WILDCARD].join(", ");

const EventKinds = z
  .array(z.string())
  .min(1)
  .max(EVENT_TYPES.length + 1)
  .superRefine((kinds, ctx) => {
    const unknown = kinds.filter((k) => k !== WILDCARD && !(EVENT_TYPES as readonly string[]).includes(k));
    if (unknown.length) {
      ctx.addIssue({
        code: "custom",
        message: `unknown event kind ${unknown.map((k) => JSON.stringify(k)).join(", ")}; the catalogue is: ${CATALOGUE_TEXT} (GET /team/webhook/events)`,
      });
    }
    if (new Set(kinds).size !== kinds.length) ctx.addIssue({ code: "custom", message: "each event kind at most once" });
  })
  .openapi({ example: ["message.created", "chat.created"], description: `Event kinds: ${CATALOGUE_TEXT}` });

export const WebhookInput = z
  .object({
    name: z.string().trim().min(1).max(200).openapi({ example: "CRM sync" }),
    url: z
      .string()
      .trim()
      .min(1)
      .max(MAX_URL_LENGTH)
      .openapi({ example: "https://example.com/webhooks/agent-platform", description: "Absolute https URL of a public host" }),
    events: EventKinds,
    secret: z
      .string()
      .min(8)
      .max(512)
      .superRefine((secret, ctx) => {
        const problem = secretProblem(secret);
        if (problem) ctx.addIssue({ code: "custom", message: problem });
      })
      .optional()
      .openapi({
        description:
          "Signing secret (at least 8 characters). Omit it to get a generated whsec_ secret in the 201 answer, once. Never returned afterwards.",
        example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      }),
  })
  .strict()
  .openapi("WebhookInput");

export const Webhook = z
  .object({
    id: z.string().openapi({ example: "wh_3Jq0v8XQx4kq2Yb7Wd1Z" }),
    name: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    createdAt: z.string(),
    disabledAt: z
      .string()
      .nullable()
      .openapi({ description: "Set when the receiver answered 410 Gone; a successful manual send clears it" }),
  })
  .openapi("Webhook");

export const CreatedWebhook = Webhook.extend({
  secret: z.string().optional().openapi({
    description: "Only when the request had no secret: the generated signing secret. Shown once, never again.",
  }),
}).openapi("CreatedWebhook");

export const WebhookList = z.object({ webhooks: z.array(Webhook) }).openapi("WebhookList");

export const WebhookIdParam = z.object({
  webhookId: z.string().openapi({ param: { name: "webhookId", in: "path" }, example: "wh_3Jq0v8XQx4kq2Yb7Wd1Z" }),
});

export const DeliveryParams = WebhookIdParam.extend({
  deliveryId: z.string().openapi({ param: { name: "deliveryId", in: "path" }, example: "dlv_8nK2b0QwZr5tLp1Xc9Vf" }),
});

export const TriggerInput = z
  .object({
    payload: clientKeyed(z.record(z.string(), z.unknown())).openapi({ example: { hello: "world" }, description: "Sent as `data` of an event of type webhook.test" }),
  })
  .strict()
  .openapi("WebhookTriggerInput");

export const ReceiverResponse = z
  .object({
    status: z.number().int().nullable().openapi({ description: "The receiver's HTTP status; null when none came back" }),
    body: z.string().openapi({ description: `The receiver's answer, cut to ${RESPONSE_BODY_LIMIT} bytes` }),
    truncated: z.boolean(),
    durationMs: z.number().int(),
    error: z.string().nullable().openapi({ description: "Why the attempt failed (timeout, network, status), or null" }),
  })
  .openapi("WebhookReceiverResponse");

export const TriggerResult = z
  .object({
    success: z.boolean().openapi({ description: "true when the receiver answered 2xx" }),
    response: ReceiverResponse,
    eventId: z.string().openapi({ description: "Also the webhook-id header of the request" }),
    deliveryId: z.string(),
  })
  .openapi("WebhookTriggerResult");

export const EventCatalogue = z
  .object({
    events: z.array(z.object({ type: z.string(), description: z.string() })),
    wildcard: z.literal(WILDCARD).openapi({ description: "Subscribe to every event kind, present and future" }),
  })
  .openapi("WebhookEventCatalogue");

export const DeliveryAttempt = z
  .object({
    attempt: z.number().int(),
    trigger: z.enum(ATTEMPT_TRIGGERS),
    statusCode: z.number().int().nullable(),
    durationMs: z.number().int(),
    error: z.string().nullable(),
    responseBody: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi("WebhookDeliveryAttempt");

export const Delivery = z
  .object({
    id: z.string(),
    eventId: z.string(),
    eventType: z.string(),
    state: z.enum(DELIVERY_STATES),
    attempts: z.number().int(),
    lastStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    attemptLog: z.array(DeliveryAttempt),
  })
  .openapi("WebhookDelivery");

export const DeliveryQuery = z.object({
  state: z.enum(DELIVERY_STATES).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const DeliveryList = z.object({ deliveries: z.array(Delivery) }).openapi("WebhookDeliveryList");

export const RedeliveryResult = TriggerResult.openapi("WebhookRedeliveryResult");

export const DeleteResult = z.object({ success: z.literal(true) }).openapi("WebhookDeleteResult");
