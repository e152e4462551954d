import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, teams } from "./teams";

/**
 * A team's webhook endpoints. `secret` holds the signing secret encrypted with the Worker secret
 * WEBHOOK_SECRET_KEY (AES-GCM, src/webhooks/secret-box.ts): it must be recoverable to sign, and a
 * copy of the database alone must not reveal it. It is never returned after creation.
 */
export const webhooks = sqliteTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    url: text("url").notNull(),
    /** Subscribed event kinds (EVENT_TYPES) or ["*"]. */
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    secret: text("secret").notNull(),
    createdAt: createdAt(),
    /** Set when the receiver answered 410 Gone: no new deliveries until a manual send succeeds. */
    disabledAt: text("disabled_at"),
  },
  (t) => [index("webhooks_team_idx").on(t.teamId, t.createdAt)],
);

export const DELIVERY_STATES = ["pending", "succeeded", "failed"] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/**
 * One row per (event, webhook): the unit that is retried on its own. The unique index makes the
 * fan-out idempotent when an event message is delivered twice. `leaseUntil` is held while an
 * attempt is in flight, so two consumers never send the same delivery at once.
 */
export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id").notNull(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id, { onDelete: "cascade" }),
    /** The events row (outbox) whose body is sent; also the webhook-id header. */
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    state: text("state", { enum: DELIVERY_STATES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    lastStatus: integer("last_status"),
    lastError: text("last_error"),
    leaseUntil: text("lease_until"),
    nextAttemptAt: text("next_attempt_at"),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_webhook_unique").on(t.eventId, t.webhookId),
    index("webhook_deliveries_webhook_idx").on(t.webhookId, t.createdAt),
  ],
);

export const ATTEMPT_TRIGGERS = ["queue", "manual", "redeliver"] as const;
export type AttemptTrigger = (typeof ATTEMPT_TRIGGERS)[number];

/** Every HTTP attempt of a delivery, successful or not. */
export const webhookDeliveryAttempts = sqliteTable(
  "webhook_delivery_attempts",
  {
    id: text("id").primaryKey(),
    deliveryId: text("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: "cascade" }),
    attempt: integer("attempt").notNull(),
    trigger: text("trigger", { enum: ATTEMPT_TRIGGERS }).notNull(),
    /** Null when no HTTP answer came back (timeout, network error, refused target). */
    statusCode: integer("status_code"),
    durationMs: integer("duration_ms").notNull(),
    error: text("error"),
    /** The first bytes of the receiver's answer, for debugging. */
    responseBody: text("response_body"),
    createdAt: createdAt(),
  },
  (t) => [index("webhook_delivery_attempts_delivery_idx").on(t.deliveryId, t.attempt)],
);
