import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../../src/events/emit";
import { call, createWorld, json } from "../helpers/world";
import { createWebhook, receiverHost, receiverLog } from "./helpers";

type Hook = { id: string; name: string; url: string; events: string[]; createdAt: string; disabledAt: string | null; secret?: string };

describe("webhook resource", () => {
  it("creates a webhook, returns a generated whsec_ secret once and never again", async () => {
    const w = await createWorld();
    const res = await call("POST", "/team/webhook", {
      key: w.teamA.sk,
      body: { name: "CRM", url: "https://crm.example.com/hook", events: ["message.created", "chat.created"] },
    });
    expect(res.status).toBe(201);
    const created = await json<Hook>(res);
    expect(created).toMatchObject({ name: "CRM", url: "https://crm.example.com/hook", events: ["message.created", "chat.created"] });
    expect(created.id).toMatch(/^wh_/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);

    const got = await json<Hook>(await call("GET", `/team/webhook/${created.id}`, { key: w.teamA.sk }));
    expect(got).toEqual({ id: created.id, name: "CRM", url: created.url, events: created.events, createdAt: created.createdAt, disabledAt: null });
    const list = await json<{ webhooks: Hook[] }>(await call("GET", "/team/webhook", { key: w.teamA.sk }));
    expect(list.webhooks).toEqual([got]);
    expect(JSON.stringify(list)).not.toContain(created.secret);

    // At rest the secret is sealed, not stored as given.
    const row = await env.DB.prepare("SELECT secret FROM webhooks WHERE id = ?").bind(created.id).first<{ secret: string }>();
    expect(row?.secret).toMatch(/^v1\./);
    expect(row?.secret).not.toContain(created.secret!.slice(6, 20));
  });

  it("does not echo a secret given at creation", async () => {
    const w = await createWorld();
    const res = await call("POST", "/team/webhook", {
      key: w.teamA.sk,
      body: { name: "Mine", url: "https://a.example.com/", events: ["*"], secret: "a-long-enough-secret" },
    });
    expect(res.status).toBe(201);
    const body = await json<Hook>(res);
    expect(body).not.toHaveProperty("secret");
    expect(body.events).toEqual(["*"]);
  });

  it("rejects unknown event kinds with a 400 that lists the catalogue", async () => {
    const w = await createWorld();
    const res = await call("POST", "/team/webhook", {
      key: w.teamA.sk,
      body: { name: "x", url: "https://a.example.com/", events: ["message.created", "message.deleted"] },
    });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error).toBe("Bad Request");
    expect(body.message).toContain('"message.deleted"');
    for (const type of [...EVENT_TYPES, "*"]) expect(body.message).toContain(type);

    for (const events of [[], ["chat.created", "chat.created"], "chat.created"]) {
      const bad = await call("POST", "/team/webhook", { key: w.teamA.sk, body: { name: "x", url: "https://a.example.com/", events } });
      expect(bad.status).toBe(400);
    }
  });

  it("validates url, name and secret", async () => {
    const w = await createWorld();
    const base = { name: "x", events: ["*"], url: "https://a.example.com/" };
    const cases: Record<string, unknown>[] = [
      { url: "/relative/path" },
      { url: "ftp://a.example.com/" },
      { url: "not a url" },
      { url: "https://user:pass@a.example.com/" },
      { name: "" },
      { secret: "short" },
      { secret: "whsec_not*base64" },
      { secret: "whsec_c2hvcnQ=" }, // decodes to 5 bytes
      { extra: true },
    ];
    for (const change of cases) {
      const res = await call("POST", "/team/webhook", { key: w.teamA.sk, body: { ...base, ...change } });
      expect(res.status, JSON.stringify(change)).toBe(400);
    }
    // Local development (WEBHOOK_ALLOW_PRIVATE_TARGETS="true") accepts http and loopback.
    const local = await call("POST", "/team/webhook", { key: w.teamA.sk, body: { ...base, url: "http://localhost:4000/hook" } });
    expect(local.status).toBe(201);
  });

  it("serves the event catalogue at /team/webhook/events (not taken for a webhook id)", async () => {
    const w = await createWorld();
    const res = await call("GET", "/team/webhook/events", { key: w.teamA.sk });
    expect(res.status).toBe(200);
    const body = await json<{ events: { type: string; description: string }[]; wildcard: string }>(res);
    expect(body.events.map((e) => e.type)).toEqual([...EVENT_TYPES]);
    expect(body.wildcard).toBe("*");
    for (const e of body.events) expect(e.description.length).toBeGreaterThan(10);
  });

  it("deletes a webhook: 200 {success: true}, then 404", async () => {
    const w = await createWorld();
    const hook = await createWebhook(w.teamA.sk, { url: "https://a.example.com/" });
    const del = await call("DELETE", `/team/webhook/${hook.id}`, { key: w.teamA.sk });
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ success: true });
    expect((await call("GET", `/team/webhook/${hook.id}`, { key: w.teamA.sk })).status).toBe(404);
    expect((await call("DELETE", `/team/webhook/${hook.id}`, { key: w.teamA.sk })).status).toBe(404);
  });

  it("keeps teams apart: another team's webhook is 404 on every route", async () => {
    const w = await createWorld();
    const host = receiverHost("iso");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/` });
    const other = w.teamB.sk;
    expect((await call("GET", `/team/webhook/${hook.id}`, { key: other })).status).toBe(404);
    expect((await call("GET", `/team/webhook/${hook.id}/deliveries`, { key: other })).status).toBe(404);
    expect((await call("POST", `/team/webhook/${hook.id}`, { key: other, body: { payload: {} } })).status).toBe(404);
    expect((await call("DELETE", `/team/webhook/${hook.id}`, { key: other })).status).toBe(404);
    expect(await json(await call("GET", "/team/webhook", { key: other }))).toEqual({ webhooks: [] });
    // The outsider's user key on its own team cannot reach it either.
    expect((await call("GET", `/team/${w.teamB.id}/webhook/${hook.id}`, { key: w.outsider.userKey })).status).toBe(404);
    expect(await receiverLog(host)).toEqual([]);
    expect((await call("GET", `/team/webhook/${hook.id}`, { key: w.teamA.sk })).status).toBe(200);
  });

  it("serves user keys under /team/{teamId}/webhook with the role check", async () => {
    const w = await createWorld();
    const prefix = `/team/${w.teamA.id}`;
    const hook = await createWebhook(w.owner.userKey, { url: "https://a.example.com/" }, `${prefix}/webhook`);
    expect((await call("GET", `${prefix}/webhook/${hook.id}`, { key: w.admin.userKey })).status).toBe(200);
    // Same records as the team key sees.
    const viaTeamKey = await json<{ webhooks: Hook[] }>(await call("GET", "/team/webhook", { key: w.teamA.sk }));
    expect(viaTeamKey.webhooks.map((h) => h.id)).toEqual([hook.id]);
    expect((await call("GET", `${prefix}/webhook/events`, { key: w.owner.userKey })).status).toBe(200);

    expect((await call("GET", `${prefix}/webhook`, { key: w.member.userKey })).status).toBe(403);
    expect((await call("GET", `${prefix}/webhook`, { key: w.outsider.userKey })).status).toBe(403);
    expect((await call("GET", `${prefix}/webhook`, { key: w.teamA.sk })).status).toBe(403);

    const bare = await call("POST", "/team/webhook", { key: w.owner.userKey, body: {} });
    expect(bare.status).toBe(400);
    expect((await json(bare)).message).toContain(`/team/{teamId}/webhook`);
    expect((await call("GET", "/team/webhook", { key: w.teamA.pk })).status).toBe(403);
    // "webhook" is never read as a team id.
    expect((await call("GET", "/team/webhook/webhook", { key: w.teamA.sk })).status).toBe(404);
  });

  it("limits a team to 25 webhooks", async () => {
    const w = await createWorld();
    for (let i = 0; i < 25; i++) await createWebhook(w.teamA.sk, { url: `https://a.example.com/${i}` });
    const res = await call("POST", "/team/webhook", { key: w.teamA.sk, body: { name: "26", url: "https://a.example.com/", events: ["*"] } });
    expect(res.status).toBe(409);
  });

  it("documents both path families in /openapi.json", async () => {
    const doc = await json<{ paths: Record<string, Record<string, unknown>> }>(await call("GET", "/openapi.json"));
    for (const path of [
      "/team/webhook",
      "/team/webhook/events",
      "/team/webhook/{webhookId}",
      "/team/webhook/{webhookId}/deliveries",
      "/team/webhook/{webhookId}/deliveries/{deliveryId}/redeliver",
      "/team/{teamId}/webhook",
      "/team/{teamId}/webhook/events",
      "/team/{teamId}/webhook/{webhookId}",
      "/team/{teamId}/webhook/{webhookId}/deliveries",
      "/team/{teamId}/webhook/{webhookId}/deliveries/{deliveryId}/redeliver",
    ]) {
      expect(doc.paths, path).toHaveProperty([path]);
    }
    expect(Object.keys(doc.paths["/team/webhook/{webhookId}"]!).sort()).toEqual(["delete", "get", "post"]);
  });
});

describe("manual trigger and delivery log", () => {
  it("sends the payload now and returns the receiver's status, body and duration", async () => {
    const w = await createWorld();
    const host = receiverHost("manual");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/in` });
    const res = await call("POST", `/team/webhook/${hook.id}`, { key: w.teamA.sk, body: { payload: { hello: "world" } } });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ success: true, response: { status: 200, body: "ok", truncated: false, error: null } });
    expect(body.response.durationMs).toBeGreaterThanOrEqual(0);

    const [received] = await receiverLog(host);
    expect(received?.webhookId).toBe(body.eventId);
    const sent = JSON.parse(received!.body);
    expect(sent).toEqual({ id: body.eventId, type: "webhook.test", createdAt: sent.createdAt, teamId: w.teamA.id, data: { hello: "world" } });
    expect(received?.contentType).toBe("application/json");
  });

  it("reports a failing receiver without throwing, and cuts long answers to 4096 bytes", async () => {
    const w = await createWorld();
    const failing = await createWebhook(w.teamA.sk, { url: `https://${receiverHost()}/?status=503` });
    const res = await json(await call("POST", `/team/webhook/${failing.id}`, { key: w.teamA.sk, body: { payload: {} } }));
    expect(res).toMatchObject({ success: false, response: { status: 503, error: "receiver answered 503" } });

    const big = await createWebhook(w.teamA.sk, { url: `https://${receiverHost()}/?size=10000` });
    const long = await json(await call("POST", `/team/webhook/${big.id}`, { key: w.teamA.sk, body: { payload: {} } }));
    expect(long.success).toBe(true);
    expect(long.response.body).toHaveLength(4096);
    expect(long.response.truncated).toBe(true);

    const redirect = await createWebhook(w.teamA.sk, { url: `https://${receiverHost()}/?redirect` });
    const moved = await json(await call("POST", `/team/webhook/${redirect.id}`, { key: w.teamA.sk, body: { payload: {} } }));
    expect(moved).toMatchObject({ success: false, response: { status: 302 } });
    expect(moved.response.error).toContain("redirects are not followed");

    expect((await call("POST", `/team/webhook/${failing.id}`, { key: w.teamA.sk, body: {} })).status).toBe(400);
  });

  it("logs deliveries with their attempts and sends a failed one again by hand, with the same webhook-id", async () => {
    const w = await createWorld();
    const host = receiverHost("redeliver");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/?fail=1` });
    const first = await json(await call("POST", `/team/webhook/${hook.id}`, { key: w.teamA.sk, body: { payload: { n: 1 } } }));
    expect(first.success).toBe(false);

    const listed = await json(await call("GET", `/team/webhook/${hook.id}/deliveries`, { key: w.teamA.sk }));
    expect(listed.deliveries).toHaveLength(1);
    expect(listed.deliveries[0]).toMatchObject({
      id: first.deliveryId,
      eventId: first.eventId,
      eventType: "webhook.test",
      state: "failed",
      attempts: 1,
      lastStatus: 500,
      attemptLog: [{ attempt: 1, trigger: "manual", statusCode: 500, error: "receiver answered 500" }],
    });

    const path = `/team/webhook/${hook.id}/deliveries/${first.deliveryId}/redeliver`;
    const again = await json(await call("POST", path, { key: w.teamA.sk }));
    expect(again).toMatchObject({ success: true, eventId: first.eventId, deliveryId: first.deliveryId, response: { status: 200 } });
    const log = await receiverLog(host);
    expect(log.map((r) => r.webhookId)).toEqual([first.eventId, first.eventId]);
    expect(log[1]!.body).toBe(log[0]!.body);

    const after = await json(await call("GET", `/team/webhook/${hook.id}/deliveries?state=succeeded`, { key: w.teamA.sk }));
    expect(after.deliveries[0]).toMatchObject({ state: "succeeded", attempts: 2, lastStatus: 200, lastError: null });
    expect(after.deliveries[0].attemptLog.map((a: { trigger: string }) => a.trigger)).toEqual(["manual", "redeliver"]);

    // Only failed deliveries can be sent again; unknown ones are 404.
    expect((await call("POST", path, { key: w.teamA.sk })).status).toBe(409);
    expect((await call("POST", `/team/webhook/${hook.id}/deliveries/dlv_nope/redeliver`, { key: w.teamA.sk })).status).toBe(404);
    expect((await call("POST", path, { key: w.teamB.sk })).status).toBe(404);
    const none = await json(await call("GET", `/team/webhook/${hook.id}/deliveries?state=failed`, { key: w.teamA.sk }));
    expect(none.deliveries).toEqual([]);
  });
});
