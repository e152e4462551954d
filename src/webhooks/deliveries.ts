import { and, eq, inArray, isNull, lt, or, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Database } from "../db/client";
import {
  events,
  webhookDeliveries,
  webhookDeliveryAttempts,
  webhooks,
  type AttemptTrigger,
  type DeliveryState,
} from "../db/schema";
import type { PlatformEvent } from "../events/emit";
import { newId, nowIso } from "../lib/ids";
import { openSecret } from "./secret-box";
import { DELIVERY_TIMEOUT_MS, sendSigned, type SendOutcome } from "./send";

/** Retry delays: base * 2^(n-1) seconds after the n-th failed attempt, capped, with jitter. */
export const BACKOFF_BASE_SECONDS = 10;
export const BACKOFF_CAP_SECONDS = 3600;
/** An attempt holds its delivery this long, so two consumers never send it at the same time. */
const LEASE_MS = DELIVERY_TIMEOUT_MS + 45_000;
/** Attempt logs keep only the start of the receiver's answer. */
const LOGGED_BODY_CHARS = 1024;

/**
 * "Equal jitter": half the nominal delay fixed, half random, so that endpoints that failed together
 * do not all come back at the same second, and a delay never collapses to zero.
 */
export function backoffSeconds(failedAttempts: number, random = Math.random()): number {
  const nominal = Math.min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** Math.max(0, failedAttempts - 1));
  return Math.max(1, Math.round(nominal / 2 + (random * nominal) / 2));
}

export type AttemptResult =
  | { kind: "sent"; deliveryId: string; attempt: number; outcome: SendOutcome; retryInSeconds: number | null }
  /** Nothing to do: already succeeded or failed, disabled endpoint, or the records are gone. */
  | { kind: "settled"; deliveryId: string; state: DeliveryState | "missing" }
  /** Another consumer holds the lease: come back when it expires. */
  | { kind: "busy"; deliveryId: string; retryInSeconds: number };

/**
 * Makes one attempt of a delivery: claims it (atomically bumping its attempt count and taking the
 * lease), sends the signed event, then logs the attempt and the delivery's new state in one batch.
 * `fromStates`: the states a delivery may be claimed from (failed, for a redelivery by hand).
 * A queue attempt that fails retryably stays pending with retryInSeconds set; the caller retries.
 */
export async function attemptDelivery(
  env: Env,
  db: Database,
  deliveryId: string,
  trigger: AttemptTrigger,
  fromStates: DeliveryState[] = ["pending"],
): Promise<AttemptResult> {
  const now = Date.now();
  const nowText = new Date(now).toISOString();
  const claimed = await db
    .update(webhookDeliveries)
    .set({
      attempts: sql`${webhookDeliveries.attempts} + 1`,
      state: "pending",
      leaseUntil: new Date(now + LEASE_MS).toISOString(),
      updatedAt: nowText,
    })
    .where(
      and(
        eq(webhookDeliveries.id, deliveryId),
        inArray(webhookDeliveries.state, fromStates),
        or(isNull(webhookDeliveries.leaseUntil), lt(webhookDeliveries.leaseUntil, nowText)),
      ),
    )
    .returning()
    .get();

  if (!claimed) {
    const row = await db
      .select({ state: webhookDeliveries.state, leaseUntil: webhookDeliveries.leaseUntil })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryId))
      .get();
    if (!row) return { kind: "settled", deliveryId, state: "missing" };
    if (!fromStates.includes(row.state)) return { kind: "settled", deliveryId, state: row.state };
    const wait = row.leaseUntil ? Math.ceil((Date.parse(row.leaseUntil) - now) / 1000) : 1;
    return { kind: "busy", deliveryId, retryInSeconds: Math.max(1, wait) };
  }

  const [hook, event] = await db.batch([
    db.select().from(webhooks).where(and(eq(webhooks.id, claimed.webhookId), eq(webhooks.teamId, claimed.teamId))),
    db.select().from(events).where(eq(events.id, claimed.eventId)),
  ]);
  const webhook = hook[0];
  const stored = event[0];
  const giveUpReason = !webhook
    ? "the webhook was deleted"
    : !stored
      ? "the event is no longer stored"
      : webhook.disabledAt && trigger === "queue"
        ? "the endpoint is disabled (it answered 410 Gone); send by hand to enable it again"
        : null;
  if (giveUpReason || !webhook || !stored) {
    // Not an HTTP attempt: undo the count, close the delivery.
    await db
      .update(webhookDeliveries)
      .set({
        attempts: sql`${webhookDeliveries.attempts} - 1`,
        state: "failed",
        lastError: giveUpReason,
        leaseUntil: null,
        nextAttemptAt: null,
        updatedAt: nowIso(),
      })
      .where(eq(webhookDeliveries.id, deliveryId));
    return { kind: "settled", deliveryId, state: "failed" };
  }

  const outcome = await sendSigned(
    env,
    { url: webhook.url, secret: await openSecret(env, webhook.secret) },
    { id: stored.id, type: stored.type, createdAt: stored.createdAt, teamId: stored.teamId, data: stored.data },
  );
  const record = recordAttempt(db, { deliveryId, attempt: claimed.attempts, trigger, outcome, webhook });
  await db.batch([db.insert(webhookDeliveryAttempts).values(record.log), ...record.statements]);
  return { kind: "sent", deliveryId, attempt: claimed.attempts, outcome, retryInSeconds: record.retryInSeconds };
}

type WebhookRow = typeof webhooks.$inferSelect;

/**
 * The writes that close an attempt: its log row, the delivery's new state, and the webhook's
 * (410 Gone disables it; a successful send by hand enables it again). A queue attempt that failed
 * retryably stays pending, with the delay before the next one.
 */
function recordAttempt(
  db: Database,
  a: { deliveryId: string; attempt: number; trigger: AttemptTrigger; outcome: SendOutcome; webhook: Pick<WebhookRow, "id" | "disabledAt"> },
): { log: typeof webhookDeliveryAttempts.$inferInsert; statements: BatchItem<"sqlite">[]; retryInSeconds: number | null } {
  const { outcome } = a;
  const retryInSeconds = !outcome.ok && outcome.retryable && a.trigger === "queue" ? backoffSeconds(a.attempt) : null;
  const finishedAt = nowIso();
  const state: DeliveryState = outcome.ok ? "succeeded" : retryInSeconds !== null ? "pending" : "failed";
  const log = {
    id: newId("att"),
    deliveryId: a.deliveryId,
    attempt: a.attempt,
    trigger: a.trigger,
    statusCode: outcome.statusCode,
    durationMs: outcome.durationMs,
    error: outcome.error,
    responseBody: outcome.body.slice(0, LOGGED_BODY_CHARS) || null,
    createdAt: finishedAt,
  };
  const update = db
    .update(webhookDeliveries)
    .set({
      state,
      lastStatus: outcome.statusCode,
      lastError: outcome.error,
      leaseUntil: null,
      nextAttemptAt: retryInSeconds !== null ? new Date(Date.now() + retryInSeconds * 1000).toISOString() : null,
      updatedAt: finishedAt,
    })
    .where(eq(webhookDeliveries.id, a.deliveryId));
  const hookChange = outcome.gone
    ? [db.update(webhooks).set({ disabledAt: finishedAt }).where(eq(webhooks.id, a.webhook.id))]
    : outcome.ok && a.webhook.disabledAt && a.trigger !== "queue"
      ? [db.update(webhooks).set({ disabledAt: null }).where(eq(webhooks.id, a.webhook.id))]
      : [];
  return { log, statements: [update, ...hookChange], retryInSeconds };
}

/** D1 binds at most 100 parameters per statement: rows per multi-row insert (13 and 9 columns). */
const DELIVERY_ROWS_PER_INSERT = 7;
const ATTEMPT_ROWS_PER_INSERT = 11;

function chunk<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The team's enabled webhooks, read once per team per queue batch. */
export type WebhookCache = Map<string, Promise<WebhookRow[]>>;

function enabledWebhooks(db: Database, teamId: string, cache: WebhookCache): Promise<WebhookRow[]> {
  let rows = cache.get(teamId);
  if (!rows) {
    rows = db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.teamId, teamId), isNull(webhooks.disabledAt)))
      .all();
    cache.set(teamId, rows);
  }
  return rows;
}

/**
 * The fan-out of one committed event: one delivery per matching, enabled webhook of the team, each
 * attempted once right away. Returns the deliveries to try again, with their delays, for the queue.
 *
 * The common case costs three D1 round trips whatever the number of endpoints: the team's webhooks
 * (cached per batch), the delivery rows inserted already claimed for attempt 1 (so no other
 * consumer sends them meanwhile), and one batch with every attempt's log and outcome. The unique
 * (event, webhook) index makes a repeated event message create nothing: rows that already exist go
 * through the ordinary claim of attemptDelivery, which skips those already settled.
 */
export async function fanOut(
  env: Env,
  db: Database,
  event: PlatformEvent,
  limit: <T>(task: () => Promise<T>) => Promise<T>,
  cache: WebhookCache = new Map(),
): Promise<{ deliveryId: string; delaySeconds: number }[]> {
  const hooks = await enabledWebhooks(db, event.teamId, cache);
  const matching = hooks.filter((h) => h.events.includes("*") || h.events.includes(event.type));
  if (!matching.length) return [];

  const now = Date.now();
  const nowText = new Date(now).toISOString();
  const rows = matching.map((h) => ({
    id: newId("dlv"),
    teamId: event.teamId,
    webhookId: h.id,
    eventId: event.id,
    eventType: event.type,
    state: "pending" as const,
    attempts: 1,
    leaseUntil: new Date(now + LEASE_MS).toISOString(),
    createdAt: nowText,
    updatedAt: nowText,
  }));
  const inserts = chunk(rows, DELIVERY_ROWS_PER_INSERT).map((part) =>
    db
      .insert(webhookDeliveries)
      .values(part)
      .onConflictDoNothing()
      .returning({ id: webhookDeliveries.id, webhookId: webhookDeliveries.webhookId }),
  );
  const created = (await db.batch([inserts[0]!, ...inserts.slice(1)])).flat();
  const byId = new Map(matching.map((h) => [h.id, h]));

  const payload = { id: event.id, type: event.type, createdAt: event.createdAt, teamId: event.teamId, data: event.data };
  const body = JSON.stringify(payload);
  const firstAttempts = await Promise.all(
    created.map((row) =>
      limit(async () => {
        const webhook = byId.get(row.webhookId)!;
        const outcome = await sendSigned(env, { url: webhook.url, secret: await openSecret(env, webhook.secret) }, payload, body);
        return { deliveryId: row.id, ...recordAttempt(db, { deliveryId: row.id, attempt: 1, trigger: "queue", outcome, webhook }) };
      }),
    ),
  );
  const retries: { deliveryId: string; delaySeconds: number }[] = [];
  if (firstAttempts.length) {
    const logs = chunk(
      firstAttempts.map((a) => a.log),
      ATTEMPT_ROWS_PER_INSERT,
    ).map((part) => db.insert(webhookDeliveryAttempts).values(part));
    await db.batch([logs[0]!, ...logs.slice(1), ...firstAttempts.flatMap((a) => a.statements)]);
    for (const a of firstAttempts) if (a.retryInSeconds !== null) retries.push({ deliveryId: a.deliveryId, delaySeconds: a.retryInSeconds });
  }

  // A repeated event message: the deliveries exist; attempt those still pending.
  if (created.length < matching.length) {
    const fresh = new Set(created.map((r) => r.id));
    const existing = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.eventId, event.id),
          eq(webhookDeliveries.teamId, event.teamId),
          eq(webhookDeliveries.state, "pending"),
        ),
      )
      .all();
    const results = await Promise.all(
      existing.filter((d) => !fresh.has(d.id)).map((d) => limit(() => attemptDelivery(env, db, d.id, "queue"))),
    );
    for (const r of results) {
      if (r.kind === "busy") retries.push({ deliveryId: r.deliveryId, delaySeconds: r.retryInSeconds });
      if (r.kind === "sent" && r.retryInSeconds !== null) retries.push({ deliveryId: r.deliveryId, delaySeconds: r.retryInSeconds });
    }
  }
  return retries;
}
/** The dead-letter queue's verdict: the delivery used up its retries. */
export async function markDeadLettered(db: Database, deliveryId: string): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({
      state: "failed",
      lastError: sql`coalesce(${webhookDeliveries.lastError}, 'no answer') || ' (gave up after ' || ${webhookDeliveries.attempts} || ' attempts)'`,
      leaseUntil: null,
      nextAttemptAt: null,
      updatedAt: nowIso(),
    })
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.state, "pending")));
}
