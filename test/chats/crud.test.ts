import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/world";
import { chatWorld, createAgent, createChat, messagesOf, send } from "./helpers";

describe("chat sessions", () => {
  it("creates a chat with the SPEC fields and a chat.created event in the outbox", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA, userId: "visitor-1", metadata: { page: "/pricing" } });
    expect(chat).toMatchObject({ agentId: w.agentA, teamId: w.teamA.id, userId: "visitor-1", metadata: { page: "/pricing" } });
    expect(chat.id).toMatch(/^chat_/);
    expect(new Date(chat.createdAt as string).toISOString()).toBe(chat.createdAt);
    expect(chat.messages).toBeUndefined();

    const event = await env.DB.prepare("SELECT type, data FROM events WHERE team_id = ? AND type = 'chat.created'")
      .bind(w.teamA.id)
      .first<{ type: string; data: string }>();
    expect(JSON.parse(event?.data ?? "{}")).toMatchObject({ id: chat.id, agentId: w.agentA });
  });

  it("refuses a missing agentId (400) and an agent of another team or none at all (404)", async () => {
    const w = await chatWorld();
    const missing = await call("POST", "/chat", { key: w.teamA.sk, body: { userId: "x" } });
    expect(missing.status).toBe(400);
    expect((await json(missing)).message).toContain("agentId");
    for (const agentId of [w.agentB, "agt_nope"]) {
      const res = await call("POST", "/chat", { key: w.teamA.sk, body: { agentId } });
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ error: "Not Found", message: "Agent not found." });
    }
  });

  it("gets a chat with its messages in order, and lists its messages", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    expect((await send(w.teamA.sk, chat.id, { content: "Hello there" })).status).toBe(200);
    expect((await send(w.teamA.sk, chat.id, { content: "What can you do?" })).status).toBe(200);

    const res = await call("GET", `/chat/${chat.id}`, { key: w.teamA.sk });
    expect(res.status).toBe(200);
    const detail = await json(res);
    expect(detail).toMatchObject({ id: chat.id, agentId: w.agentA, teamId: w.teamA.id, createdAt: chat.createdAt });
    expect(detail.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(detail.messages[0].content).toBe("Hello there");
    expect(detail.messages[2].content).toBe("What can you do?");
    expect(await messagesOf(w.teamA.sk, chat.id)).toEqual(detail.messages);
  });

  it("lists the team's chats newest first, filtered by userId and agentType", async () => {
    const w = await chatWorld();
    const shipping = await createAgent(w.teamA.sk, { name: "Shipping", description: "Deliveries" });
    const supervisor = await createAgent(w.teamA.sk, { name: "Front desk", type: "supervisor", subAgents: [shipping] });
    const a = await createChat(w.teamA.sk, { agentId: w.agentA, userId: "u1" });
    const b = await createChat(w.teamA.sk, { agentId: supervisor, userId: "u2" });
    const c = await createChat(w.teamA.sk, { agentId: shipping, userId: "u1" });
    await createChat(w.teamB.sk, { agentId: w.agentB, userId: "u1" });

    const all = await json(await call("GET", "/chat", { key: w.teamA.sk }));
    expect(all.chats.map((x: { id: string }) => x.id)).toEqual([c.id, b.id, a.id]);
    expect(Object.keys(all.chats[0]).sort()).toEqual(["agentId", "createdAt", "id", "title", "userId"]);

    const byUser = await json(await call("GET", "/chat?userId=u1", { key: w.teamA.sk }));
    expect(byUser.chats.map((x: { id: string }) => x.id)).toEqual([c.id, a.id]);
    const supervisors = await json(await call("GET", "/chat?agentType=supervisor", { key: w.teamA.sk }));
    expect(supervisors.chats.map((x: { id: string }) => x.id)).toEqual([b.id]);
    const specialistsOfU1 = await json(await call("GET", "/chat?agentType=specialist&userId=u1", { key: w.teamA.sk }));
    expect(specialistsOfU1.chats.map((x: { id: string }) => x.id)).toEqual([c.id, a.id]);
    expect((await call("GET", "/chat?agentType=robot", { key: w.teamA.sk })).status).toBe(400);

    // The chat of a deleted agent stays listed but has no type any more.
    expect((await call("DELETE", `/agent/${w.agentA}`, { key: w.teamA.sk })).status).toBe(204);
    const after = await json(await call("GET", "/chat?agentType=specialist", { key: w.teamA.sk }));
    expect(after.chats.map((x: { id: string }) => x.id)).toEqual([c.id]);
    const stillThere = await json(await call("GET", "/chat", { key: w.teamA.sk }));
    expect(stillThere.chats).toHaveLength(3);
    const page = await json(await call("GET", "/chat?limit=1&offset=1", { key: w.teamA.sk }));
    expect(page.chats.map((x: { id: string }) => x.id)).toEqual([b.id]);
  });

  it("updates userId, title and metadata with PUT (team-level keys only)", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA, userId: "u1" });
    const res = await call("PUT", `/chat/${chat.id}`, {
      key: w.teamA.sk,
      body: { userId: "u2", title: "Refund question", metadata: { priority: "high" } },
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: chat.id, userId: "u2", title: "Refund question", metadata: { priority: "high" } });
    const cleared = await json(await call("PUT", `/chat/${chat.id}`, { key: w.teamA.sk, body: { userId: null } }));
    expect(cleared).toMatchObject({ userId: null, title: "Refund question" });

    expect((await call("PUT", `/chat/${chat.id}`, { key: w.teamA.sk, body: {} })).status).toBe(400);
    expect((await call("PUT", `/chat/${chat.id}`, { key: w.teamA.sk, body: { agentId: w.agentA } })).status).toBe(400);
    expect((await call("PUT", `/chat/${chat.id}`, { key: w.teamA.pk, body: { title: "x" } })).status).toBe(403);
    expect((await call("PUT", `/chat/${chat.id}`, { key: w.teamB.sk, body: { title: "x" } })).status).toBe(404);
    const viaUserKey = await call("PUT", `/team/${w.teamA.id}/chat/${chat.id}`, { key: w.owner.userKey, body: { title: "Owner" } });
    expect(viaUserKey.status).toBe(200);
  });

  it("deletes a chat and its messages (204), then it is gone", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    expect((await send(w.teamA.sk, chat.id, { content: "Hi" })).status).toBe(200);
    expect((await call("DELETE", `/chat/${chat.id}`, { key: w.teamB.sk })).status).toBe(404);
    expect((await call("DELETE", `/chat/${chat.id}`, { key: w.teamA.pk })).status).toBe(403);
    const res = await call("DELETE", `/chat/${chat.id}`, { key: w.teamA.sk });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await call("GET", `/chat/${chat.id}`, { key: w.teamA.sk })).status).toBe(404);
    expect((await send(w.teamA.sk, chat.id, { content: "Hi again" })).status).toBe(404);
    expect((await call("DELETE", `/chat/${chat.id}`, { key: w.teamA.sk })).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM messages WHERE chat_id = ?").bind(chat.id).first<{ n: number }>();
    expect(left?.n).toBe(0);
  });

  it("keeps every team's chats to itself: another team's chat is 404 everywhere", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    for (const [method, path, body] of [
      ["GET", `/chat/${chat.id}`, undefined],
      ["GET", `/chat/${chat.id}/message`, undefined],
      ["POST", `/chat/${chat.id}/message`, { content: "hi", role: "user" }],
      ["PUT", `/chat/${chat.id}`, { title: "x" }],
      ["DELETE", `/chat/${chat.id}`, undefined],
    ] as const) {
      for (const key of [w.teamB.sk, w.teamB.pk]) {
        const res = await call(method, path, { key, body });
        if (key === w.teamB.pk && (method === "PUT" || method === "DELETE")) expect(res.status).toBe(403);
        else expect(res.status, `${method} ${path}`).toBe(404);
      }
    }
    const listB = await json(await call("GET", "/chat", { key: w.teamB.sk }));
    expect(listB.chats).toEqual([]);
    // A user key of team B's owner cannot reach team A's chats through team B's path either.
    const viaB = await call("GET", `/team/${w.teamB.id}/chat/${chat.id}`, { key: w.outsider.userKey });
    expect(viaB.status).toBe(404);
    const viaA = await call("GET", `/team/${w.teamA.id}/chat/${chat.id}`, { key: w.owner.userKey });
    expect(viaA.status).toBe(200);
  });
});
