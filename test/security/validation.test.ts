import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createWorld, json } from "../helpers/world";
import { createWebhook, receiverHost } from "../webhooks/helpers";

async function expect400(res: Response, field: string) {
  expect(res.status, await res.clone().text()).toBe(400);
  const body = await json(res);
  expect(body.error).toBe("Bad Request");
  expect(body.fields.map((f: { field: string }) => f.field)).toContain(field);
}

/**
 * zod cannot copy a "__proto__" key into a record (the assignment would change the prototype), so
 * it drops it silently: the client got a 200 and lost the entry. Client-keyed objects refuse it.
 */
describe("__proto__ keys in client-keyed objects", { timeout: 30_000 }, () => {
  it("chat metadata: 400 on create and update, nothing stored", async () => {
    const w = await createWorld();
    const agent = await json(await call("POST", "/agent", { key: w.teamA.sk, body: { name: "A" } }));
    const proto = (extra: string) => `{"agentId":"${agent.id}","metadata":{"__proto__":{"polluted":true}${extra}}}`;
    await expect400(await call("POST", "/chat", { key: w.teamA.sk, body: proto("") }), "metadata.__proto__");
    await expect400(await call("POST", "/chat", { key: w.teamA.pk, body: proto(',"a":1') }), "metadata.__proto__");
    // Escaped in the JSON text it is the same key once parsed.
    await expect400(
      await call("POST", "/chat", { key: w.teamA.sk, body: `{"agentId":"${agent.id}","metadata":{"\\u005f_proto__":1}}` }),
      "metadata.__proto__",
    );
    expect((await json(await call("GET", "/chat", { key: w.teamA.sk }))).chats).toHaveLength(0);

    const chat = await json(await call("POST", "/chat", { key: w.teamA.sk, body: { agentId: agent.id, metadata: { a: 1 } } }));
    await expect400(await call("PUT", `/chat/${chat.id}`, { key: w.teamA.sk, body: '{"metadata":{"__proto__":{}}}' }), "metadata.__proto__");
    expect((await json(await call("GET", `/chat/${chat.id}`, { key: w.teamA.sk }))).metadata).toEqual({ a: 1 });
    // Ordinary keys that merely look special are data, kept as sent.
    const odd = await call("PUT", `/chat/${chat.id}`, { key: w.teamA.sk, body: { metadata: { constructor: "x", prototype: "y" } } });
    expect(odd.status).toBe(200);
    expect((await json(odd)).metadata).toEqual({ constructor: "x", prototype: "y" });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("team metadata: 400 on create and update", async () => {
    const w = await createWorld();
    await expect400(await call("POST", "/team", { key: w.owner.userKey, body: '{"name":"T","metadata":{"__proto__":"x"}}' }), "metadata.__proto__");
    await expect400(
      await call("PUT", `/team/${w.teamA.id}`, { key: w.owner.userKey, body: '{"metadata":{"__proto__":"x","plan":"pro"}}' }),
      "metadata.__proto__",
    );
    const team = await json(await call("GET", `/team/${w.teamA.id}`, { key: w.owner.userKey }));
    expect(team.metadata).toEqual({});
  });

  it("webhook trigger payload: 400, nothing sent", async () => {
    const w = await createWorld();
    const host = receiverHost();
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/in` });
    await expect400(
      await call("POST", `/team/webhook/${hook.id}`, { key: w.teamA.sk, body: '{"payload":{"__proto__":{"admin":true}}}' }),
      "payload.__proto__",
    );
    const sent = await env.DB.prepare("SELECT count(*) AS n FROM webhook_deliveries WHERE webhook_id = ?").bind(hook.id).first<{ n: number }>();
    expect(sent?.n).toBe(0);
  });
});

describe("the end-user id in ?userId= has the limits of x-user-id", { timeout: 30_000 }, () => {
  it("POST /chat refuses an over-long ?userId= instead of storing it", async () => {
    const w = await createWorld();
    const agent = await json(await call("POST", "/agent", { key: w.teamA.sk, body: { name: "A" } }));
    const long = "u".repeat(201);
    await expect400(await call("POST", `/chat?userId=${long}`, { key: w.teamA.pk, body: { agentId: agent.id } }), "userId");
    expect((await json(await call("GET", "/chat", { key: w.teamA.sk }))).chats).toHaveLength(0);
    const ok = await call("POST", `/chat?userId=visitor-1`, { key: w.teamA.pk, body: { agentId: agent.id } });
    expect(ok.status).toBe(200);
    const chat = await json(ok);
    expect(chat.userId).toBe("visitor-1");
    expect((await call("GET", `/chat/${chat.id}?userId=${long}`, { key: w.teamA.pk })).status).toBe(400);
    expect((await call("GET", `/chat/${chat.id}/message?userId=visitor-1`, { key: w.teamA.pk })).status).toBe(200);
  });
});
