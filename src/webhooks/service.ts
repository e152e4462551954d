import { and, asc, count, desc, eq, inArray } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Database } from "../db/client";
import { events, webhookDeliveries, webhookDeliveryAttempts, webhooks, type DeliveryState } from "../db/schema";
import { EVENT_DESCRIPTIONS, EVENT_TYPES } from "../events/emit";
import { ApiError, badRequest, conflict, notFound } from "../http/errors";
import { newId, nowIso } from "../lib/ids";
import { attemptDelivery, type AttemptResult } from "./deliveries";
import type * as schemas from "./schemas";
import { WILDCARD } from "./schemas";
import { sealSecret } from "./secret-box";
import { generateSecret } from "./signature";
import { DnsLookupError, urlPolicy, urlProblem } from "./url-guard";

/** More endpoints than this per team is almost always a leak in a provisioning script. */
export const MAX_WEBHOOKS_PER_TEAM = 25;
/** The event type of a manual trigger; not part of the catalogue (nobody subscribes to it). */
export const MANUAL_EVENT_TYPE = "webhook.test";

type WebhookRow = typeof webhooks.$inferSelect;
type Output = z.infer<typeof schemas.Webhook>;

function toOutput(row: WebhookRow): Output {
  return { id: row.id, name: row.name, url: row.url, events: row.events, createdAt: row.createdAt, disabledAt: row.disabledAt };
}

/** The URL rules (url-guard.ts) as API errors. */
async function assertAllowedUrl(env: Env, url: string): Promise<void> {
  let problem: string | null;
  try {
    problem = await urlProblem(url, urlPolicy(env));
  } catch (err) {
    if (err instanceof DnsLookupError) throw new ApiError(503, "Could not check the webhook host's address right now; try again.");
    throw err;
  }
  if (problem) throw badRequest(`Invalid body: url: ${problem}`, { fields: [{ field: "url", message: problem }] });
}

export function eventCatalogue() {
  return {
    events: EVENT_TYPES.map((type) => ({ type, description: EVENT_DESCRIPTIONS[type] })),
    wildcard: WILDCARD,
  };
}

export async function listWebhooks(db: Database, teamId: string) {
  const rows = await db.select().from(webhooks).where(eq(webhooks.teamId, teamId)).orderBy(asc(webhooks.createdAt)).all();
  return { webhooks: rows.map(toOutput) };
}

export async function createWebhook(env: Env, db: Database, teamId: string, input: z.infer<typeof schemas.WebhookInput>) {
  await assertAllowedUrl(env, input.url);
  const [{ n } = { n: 0 }] = await db.select({ n: count() }).from(webhooks).where(eq(webhooks.teamId, teamId));
  if (n >= MAX_WEBHOOKS_PER_TEAM) {
    throw conflict(`A team can have at most ${MAX_WEBHOOKS_PER_TEAM} webhooks; delete one first.`);
  }
  const secret = input.secret ?? generateSecret();
  const row: WebhookRow = {
    id: newId("wh"),
    teamId,
    name: input.name,
    url: input.url,
    // "*" covers everything: storing it alone keeps matching simple.
    events: input.events.includes(WILDCARD) ? [WILDCARD] : input.events,
    secret: await sealSecret(env, secret),
    createdAt: nowIso(),
    disabledAt: null,
  };
  await db.insert(webhooks).values(row);
  return input.secret ? toOutput(row) : { ...toOutput(row), secret };
}

async function findWebhook(db: Database, teamId: string, webhookId: string): Promise<WebhookRow> {
  const row = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, webhookId), eq(webhooks.teamId, teamId)))
    .get();
  if (!row) throw notFound("Webhook");
  return row;
}

export async function getWebhook(db: Database, teamId: string, webhookId: string) {
  return toOutput(await findWebhook(db, teamId, webhookId));
}

export async function deleteWebhook(db: Database, teamId: string, webhookId: string) {
  const deleted = await db
    .delete(webhooks)
    .where(and(eq(webhooks.id, webhookId), eq(webhooks.teamId, teamId)))
    .returning({ id: webhooks.id })
    .get();
  if (!deleted) throw notFound("Webhook");
  return { success: true as const };
}

function toTriggerResult(result: AttemptResult, eventId: string) {
  if (result.kind !== "sent") {
    // Manual sends claim a fresh or failed delivery; anything else means someone else is on it.
    throw conflict("This delivery is being sent right now; try again in a minute.");
  }
  const { outcome } = result;
  return {
    success: outcome.ok,
    response: {
      status: outcome.statusCode,
      body: outcome.body,
      truncated: outcome.truncated,
      durationMs: outcome.durationMs,
      error: outcome.error,
    },
    eventId,
    deliveryId: result.deliveryId,
  };
}

/**
 * POST /team/webhook/:id: sends `payload` now as an event of type webhook.test, signed like any
 * delivery, and answers with what the receiver said. Logged as a delivery; not retried (send again).
 */
export async function triggerWebhook(env: Env, db: Database, teamId: string, webhookId: string, payload: Record<string, unknown>) {
  const hook = await findWebhook(db, teamId, webhookId);
  await assertAllowedUrl(env, hook.url);
  const now = nowIso();
  const eventId = newId("evt");
  const deliveryId = newId("dlv");
  await db.batch([
    // Stored like any event (already "dispatched": the sweep must not queue it) so that the
    // delivery can be sent again by hand with the same body and webhook-id.
    db.insert(events).values({ id: eventId, teamId, type: MANUAL_EVENT_TYPE, data: payload, createdAt: now, dispatchedAt: now }),
    db.insert(webhookDeliveries).values({
      id: deliveryId,
      teamId,
      webhookId,
      eventId,
      eventType: MANUAL_EVENT_TYPE,
      state: "pending",
      attempts: 0,
      createdAt: now,
      updatedAt: now,
    }),
  ]);
  return toTriggerResult(await attemptDelivery(env, db, deliveryId, "manual"), eventId);
}

/** POST .../deliveries/:deliveryId/redeliver: one more attempt of a failed delivery, now. */
export async function redeliver(env: Env, db: Database, teamId: string, webhookId: string, deliveryId: string) {
  const hook = await findWebhook(db, teamId, webhookId);
  const delivery = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        eq(webhookDeliveries.webhookId, webhookId),
        eq(webhookDeliveries.teamId, teamId),
      ),
    )
    .get();
  if (!delivery) throw notFound("Delivery");
  if (delivery.state !== "failed") {
    throw conflict(`Only failed deliveries can be sent again; this one is ${delivery.state}.`);
  }
  await assertAllowedUrl(env, hook.url);
  return toTriggerResult(await attemptDelivery(env, db, deliveryId, "redeliver", ["failed"]), delivery.eventId);
}

export async function listDeliveries(
  db: Database,
  teamId: string,
  webhookId: string,
  query: { state?: DeliveryState; limit: number },
) {
  await findWebhook(db, teamId, webhookId);
  const rows = await db
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, webhookId),
        eq(webhookDeliveries.teamId, teamId),
        query.state ? eq(webhookDeliveries.state, query.state) : undefined,
      ),
    )
    .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    .limit(query.limit)
    .all();
  const attempts = rows.length
    ? await db
        .select()
        .from(webhookDeliveryAttempts)
        .where(inArray(webhookDeliveryAttempts.deliveryId, rows.map((r) => r.id)))
        .orderBy(asc(webhookDeliveryAttempts.attempt))
        .all()
    : [];
  return {
    deliveries: rows.map((r) => ({
      id: r.id,
      eventId: r.eventId,
      eventType: r.eventType,
      state: r.state,
      attempts: r.attempts,
      lastStatus: r.lastStatus,
      lastError: r.lastError,
      nextAttemptAt: r.nextAttemptAt,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      attemptLog: attempts
        .filter((a) => a.deliveryId === r.id)
        .map((a) => ({
          attempt: a.attempt,
          trigger: a.trigger,
          statusCode: a.statusCode,
          durationMs: a.durationMs,
          error: a.error,
          responseBody: a.responseBody,
          createdAt: a.createdAt,
        })),
    })),
  };
}

