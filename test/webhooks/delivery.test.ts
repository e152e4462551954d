import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { createDb } from "../../src/db/client";
import { commitWithEvents, type PlatformEvent } from "../../src/events/emit";
import { teams } from "../../src/db/schema";
import { eq } from "drizzle-orm";
import { nowIso } from "../../src/lib/ids";
import { BACKOFF_CAP_SECONDS, backoffSeconds } from "../../src/webhooks/deliveries";
import { call, createWorld, json } from "../helpers/world";
import { createWebhook, receiverHost, receiverLog, verifySignature } from "./helpers";
import { EVENTS_DLQ, EVENTS_QUEUE, attemptsOf, deliveriesOf, runQueue, storeEvent } from "./queue";

const eventMessage = (event: PlatformEvent) => ({ kind: "event" as const, event });
const deliveryMessage = (deliveryId: string) => ({ kind: "delivery" as const, deliveryId });

/** Bounds of the jittered delay after the n-th failed attempt. */
function delayBounds(failedAttempts: number): [number, number] {
  return [backoffSeconds(failedAttempts, 0), backoffSeconds(failedAttempts, 1)];
}

describe("events queue consumer: fan-out", () => {
  it("sends one signed POST per matching webhook of the event's team and acks the message", async () => {
    const w = await createWorld();
    const hosts = { all: receiverHost("all"), msg: receiverHost("msg"), agent: receiverHost("agent"), other: receiverHost("b") };
    const all = await createWebhook(w.teamA.sk, { url: `https://${hosts.all}/`, events: ["*"] });
    await createWebhook(w.teamA.sk, { url: `https://${hosts.msg}/`, events: ["message.created"], secret: "a-plain-text-secret" });
    await createWebhook(w.teamA.sk, { url: `https://${hosts.agent}/`, events: ["agent.updated"] });
    await createWebhook(w.teamB.sk, { url: `https://${hosts.other}/`, events: ["*"] });

    const event = await storeEvent(w.teamA.id, "message.created", { id: "msg_1", role: "user", content: "hi" });
    const verdict = await runQueue(EVENTS_QUEUE, eventMessage(event));
    expect(verdict).toMatchObject({ acked: true, retried: false });

    const [toAll, toMsg, toAgent, toOther] = await Promise.all(Object.values(hosts).map(receiverLog));
    expect(toAll).toHaveLength(1);
    expect(toMsg).toHaveLength(1);
    expect(toAgent).toEqual([]);
    expect(toOther).toEqual([]);
    const received = toAll![0]!;
    expect(received.webhookId).toBe(event.id);
    expect(JSON.parse(received.body)).toEqual({ id: event.id, type: "message.created", createdAt: event.createdAt, teamId: w.teamA.id, data: event.data });
    expect(await verifySignature(all.secret!, received, received.body)).toBe(true);
    expect(await verifySignature("a-plain-text-secret", toMsg![0]!, toMsg![0]!.body)).toBe(true);

    const rows = await deliveriesOf(event.id);
    expect(rows.map((r) => [r.state, r.attempts, r.last_status])).toEqual([
      ["succeeded", 1, 200],
      ["succeeded", 1, 200],
    ]);
  });

  it("fans out to a team's maximum of 25 endpoints in one pass", async () => {
    const w = await createWorld();
    const hosts = Array.from({ length: 25 }, (_, i) => receiverHost(`many${i}`));
    for (const host of hosts) await createWebhook(w.teamA.sk, { url: `https://${host}/?status=${host.startsWith("many1") ? 500 : 200}` });
    const event = await storeEvent(w.teamA.id);
    expect(await runQueue(EVENTS_QUEUE, eventMessage(event))).toMatchObject({ acked: true });
    const rows = await deliveriesOf(event.id);
    expect(rows).toHaveLength(25);
    const failing = hosts.filter((h) => h.startsWith("many1")).length;
    expect(rows.filter((r) => r.state === "pending" && r.last_status === 500)).toHaveLength(failing);
    expect(rows.filter((r) => r.state === "succeeded")).toHaveLength(25 - failing);
    for (const host of hosts) expect(await receiverLog(host)).toHaveLength(1);
    for (const r of rows) expect(await attemptsOf(r.id)).toHaveLength(1);
  });

  it("retries a failing endpoint on its own, with growing jittered delays, until it succeeds; the others get nothing twice", async () => {
    const w = await createWorld();
    const flakyHost = receiverHost("flaky");
    const steadyHost = receiverHost("steady");
    const flaky = await createWebhook(w.teamA.sk, { url: `https://${flakyHost}/?fail=3` });
    await createWebhook(w.teamA.sk, { url: `https://${steadyHost}/` });

    const event = await storeEvent(w.teamA.id);
    expect(await runQueue(EVENTS_QUEUE, eventMessage(event))).toMatchObject({ acked: true, retried: false });
    const flakyDelivery = (await deliveriesOf(event.id)).find((d) => d.webhook_id === flaky.id)!;
    expect(flakyDelivery).toMatchObject({ state: "pending", attempts: 1, last_status: 500 });

    // The queue brings the delivery message back: attempts 2 and 3 fail, 4 succeeds.
    for (const attempts of [1, 2]) {
      const verdict = await runQueue(EVENTS_QUEUE, deliveryMessage(flakyDelivery.id), attempts);
      expect(verdict).toMatchObject({ acked: false, retried: true });
      const [min, max] = delayBounds(attempts + 1);
      expect(verdict.delaySeconds).toBeGreaterThanOrEqual(min);
      expect(verdict.delaySeconds).toBeLessThanOrEqual(max);
    }
    expect(await runQueue(EVENTS_QUEUE, deliveryMessage(flakyDelivery.id), 3)).toMatchObject({ acked: true, retried: false });

    // A duplicate of either message (at-least-once queues) sends nothing more.
    expect(await runQueue(EVENTS_QUEUE, deliveryMessage(flakyDelivery.id), 4)).toMatchObject({ acked: true });
    expect(await runQueue(EVENTS_QUEUE, eventMessage(event), 2)).toMatchObject({ acked: true });

    const flakyLog = await receiverLog(flakyHost);
    expect(flakyLog.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(new Set(flakyLog.map((r) => r.webhookId))).toEqual(new Set([event.id]));
    expect((await receiverLog(steadyHost)).map((r) => r.status)).toEqual([200]);
    expect((await attemptsOf(flakyDelivery.id)).map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 200],
    ]);
  });

  it("gets every event to a receiver that fails its first attempts exactly once (by webhook-id)", async () => {
    const w = await createWorld();
    const host = receiverHost("once");
    await createWebhook(w.teamA.sk, { url: `https://${host}/?fail=5` });
    const events = [await storeEvent(w.teamA.id), await storeEvent(w.teamA.id, "chat.created"), await storeEvent(w.teamA.id)];
    for (const e of events) await runQueue(EVENTS_QUEUE, eventMessage(e));

    // Play the queue: bring back every pending delivery until none is left.
    const messageAttempts = new Map<string, number>();
    for (let round = 0; round < 10; round++) {
      const pending = (await Promise.all(events.map((e) => deliveriesOf(e.id)))).flat().filter((d) => d.state === "pending");
      if (!pending.length) break;
      for (const d of pending) {
        const attempts = (messageAttempts.get(d.id) ?? 0) + 1;
        messageAttempts.set(d.id, attempts);
        await runQueue(EVENTS_QUEUE, deliveryMessage(d.id), attempts);
      }
    }
    const log = await receiverLog(host);
    const accepted = log.filter((r) => r.status === 200).map((r) => r.webhookId);
    expect(accepted.sort()).toEqual(events.map((e) => e.id).sort());
    expect(log.filter((r) => r.status === 500)).toHaveLength(5);
    for (const e of events) expect((await deliveriesOf(e.id))[0]?.state).toBe("succeeded");
  });

  it("dead-letters an endpoint that always fails, with every attempt logged, and lets it be sent again by hand", async () => {
    const w = await createWorld();
    const host = receiverHost("dead");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/?status=500` });
    const event = await storeEvent(w.teamA.id);
    await runQueue(EVENTS_QUEUE, eventMessage(event));
    const [delivery] = await deliveriesOf(event.id);

    // wrangler.toml: max_retries = 10, so the delivery message is seen 11 times before the DLQ.
    for (let attempts = 1; attempts <= 11; attempts++) {
      const verdict = await runQueue(EVENTS_QUEUE, deliveryMessage(delivery!.id), attempts);
      expect(verdict.retried, `message attempt ${attempts}`).toBe(true);
      expect(verdict.delaySeconds).toBeLessThanOrEqual(BACKOFF_CAP_SECONDS);
      expect(verdict.delaySeconds).toBeGreaterThanOrEqual(delayBounds(attempts + 1)[0]);
    }
    expect((await deliveriesOf(event.id))[0]?.state).toBe("pending");
    expect(await runQueue(EVENTS_DLQ, deliveryMessage(delivery!.id))).toMatchObject({ acked: true });

    const listed = await json(await call("GET", `/team/webhook/${hook.id}/deliveries`, { key: w.teamA.sk }));
    const [failed] = listed.deliveries;
    expect(failed).toMatchObject({ id: delivery!.id, state: "failed", attempts: 12, lastStatus: 500, nextAttemptAt: null });
    expect(failed.lastError).toContain("gave up after 12 attempts");
    expect(failed.attemptLog).toHaveLength(12);
    expect(failed.attemptLog.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    for (const a of failed.attemptLog) expect(a).toMatchObject({ trigger: "queue", statusCode: 500, error: "receiver answered 500" });
    expect((await receiverLog(host)).length).toBe(12);

    // A dead letter is final for the queue: a late duplicate does not send.
    expect(await runQueue(EVENTS_QUEUE, deliveryMessage(delivery!.id), 12)).toMatchObject({ acked: true });
    const again = await call("POST", `/team/webhook/${hook.id}/deliveries/${delivery!.id}/redeliver`, { key: w.teamA.sk });
    expect(await json(again)).toMatchObject({ success: false, response: { status: 500 } });
    expect(await attemptsOf(delivery!.id)).toHaveLength(13);
  });

  it("disables an endpoint that answers 410 Gone; a successful manual send enables it again", async () => {
    const w = await createWorld();
    const host = receiverHost("gone");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/?fail=1&failStatus=410` });
    const first = await storeEvent(w.teamA.id);
    expect(await runQueue(EVENTS_QUEUE, eventMessage(first))).toMatchObject({ acked: true });
    expect((await deliveriesOf(first.id))[0]).toMatchObject({ state: "failed", last_status: 410 });
    const disabled = await json(await call("GET", `/team/webhook/${hook.id}`, { key: w.teamA.sk }));
    expect(disabled.disabledAt).toEqual(expect.any(String));

    const second = await storeEvent(w.teamA.id);
    await runQueue(EVENTS_QUEUE, eventMessage(second));
    expect(await deliveriesOf(second.id)).toEqual([]);
    expect(await receiverLog(host)).toHaveLength(1);

    const manual = await json(await call("POST", `/team/webhook/${hook.id}`, { key: w.teamA.sk, body: { payload: { ping: 1 } } }));
    expect(manual.success).toBe(true);
    expect((await json(await call("GET", `/team/webhook/${hook.id}`, { key: w.teamA.sk }))).disabledAt).toBeNull();
    const third = await storeEvent(w.teamA.id);
    await runQueue(EVENTS_QUEUE, eventMessage(third));
    expect((await deliveriesOf(third.id))[0]?.state).toBe("succeeded");
  });

  it("acks a message it can never read instead of retrying it", async () => {
    expect(await runQueue(EVENTS_QUEUE, { nonsense: true })).toMatchObject({ acked: true, retried: false });
    expect(await runQueue(EVENTS_QUEUE, { kind: "delivery", deliveryId: "dlv_missing" })).toMatchObject({ acked: true });
  });

  it("grows the backoff exponentially, with jitter, up to the cap", () => {
    expect(delayBounds(1)).toEqual([5, 10]);
    expect(delayBounds(2)).toEqual([10, 20]);
    expect(delayBounds(5)).toEqual([80, 160]);
    expect(delayBounds(30)).toEqual([BACKOFF_CAP_SECONDS / 2, BACKOFF_CAP_SECONDS]);
    const samples = new Set(Array.from({ length: 50 }, () => backoffSeconds(6)));
    expect(samples.size).toBeGreaterThan(1);
  });
});

describe("events from commit to receiver", () => {
  it("delivers a committed event through the real events queue", async () => {
    const w = await createWorld();
    const host = receiverHost("e2e");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/`, events: ["agent.updated"] });
    const db = createDb(env.DB);
    const ctx = createExecutionContext();
    await commitWithEvents(
      { env, db, waitUntil: (p) => ctx.waitUntil(p) },
      [db.update(teams).set({ updatedAt: nowIso() }).where(eq(teams.id, w.teamA.id))],
      [{ type: "agent.updated", teamId: w.teamA.id, data: { id: "agent_1", name: "Helper" } }],
    );
    await waitOnExecutionContext(ctx);
    const { results } = await env.DB.prepare("SELECT id, dispatched_at FROM events WHERE team_id = ? AND type = 'agent.updated'")
      .bind(w.teamA.id)
      .all<{ id: string; dispatched_at: string | null }>();
    expect(results).toHaveLength(1);
    expect(results[0]?.dispatched_at).not.toBeNull();

    await vi.waitFor(async () => expect(await receiverLog(host)).toHaveLength(1), { timeout: 20_000, interval: 250 });
    const [received] = await receiverLog(host);
    expect(received?.webhookId).toBe(results[0]?.id);
    expect(JSON.parse(received!.body)).toMatchObject({ type: "agent.updated", teamId: w.teamA.id, data: { id: "agent_1", name: "Helper" } });
    expect(await verifySignature(hook.secret!, received!, received!.body)).toBe(true);
  });

  it("re-dispatches, on the cron sweep, events a crash left undispatched for over 30 s", async () => {
    const w = await createWorld();
    const host = receiverHost("sweep");
    await createWebhook(w.teamA.sk, { url: `https://${host}/` });
    const stale = await storeEvent(w.teamA.id, "chat.created", { id: "chat_1" }, null, new Date(Date.now() - 60_000).toISOString());
    const fresh = await storeEvent(w.teamA.id, "chat.created", { id: "chat_2" }, null);

    await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env);
    const dispatched = async (id: string) =>
      (await env.DB.prepare("SELECT dispatched_at FROM events WHERE id = ?").bind(id).first<{ dispatched_at: string | null }>())
        ?.dispatched_at;
    expect(await dispatched(stale.id)).not.toBeNull();
    expect(await dispatched(fresh.id)).toBeNull();

    await vi.waitFor(async () => expect(await receiverLog(host)).toHaveLength(1), { timeout: 20_000, interval: 250 });
    expect((await receiverLog(host))[0]?.webhookId).toBe(stale.id);
  });

  it("puts an event whose fan-out was dead-lettered back in the outbox", async () => {
    const w = await createWorld();
    const event = await storeEvent(w.teamA.id);
    expect(await runQueue(EVENTS_DLQ, eventMessage(event))).toMatchObject({ acked: true });
    const row = await env.DB.prepare("SELECT dispatched_at FROM events WHERE id = ?").bind(event.id).first<{ dispatched_at: string | null }>();
    expect(row?.dispatched_at).toBeNull();
  });
});
