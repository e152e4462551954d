import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/world";
import { chatWorld, createChat, messagesOf, send } from "./helpers";

describe("publishable keys on chats", () => {
  it("reach a chat made with a userId only when they present the same userId", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.pk, { agentId: w.agentA, userId: "alice" });
    expect(chat.userId).toBe("alice");
    const alice = { "x-user-id": "alice" };

    expect((await call("GET", `/chat/${chat.id}`, { key: w.teamA.pk, headers: alice })).status).toBe(200);
    expect((await send(w.teamA.pk, chat.id, { content: "Hi, I am Alice" }, alice)).status).toBe(200);
    expect(await messagesOf(w.teamA.pk, chat.id, alice)).toHaveLength(2);
    // Query parameter form (links, WebSockets).
    expect((await call("GET", `/chat/${chat.id}/message?userId=alice`, { key: w.teamA.pk })).status).toBe(200);

    for (const headers of [undefined, { "x-user-id": "bob" }, { "x-user-id": "ALICE" }]) {
      for (const [method, path, body] of [
        ["GET", `/chat/${chat.id}`, undefined],
        ["GET", `/chat/${chat.id}/message`, undefined],
        ["POST", `/chat/${chat.id}/message`, { content: "I am not Alice", role: "user" }],
      ] as const) {
        const res = await call(method, path, { key: w.teamA.pk, headers, body });
        expect(res.status, `${method} ${path} as ${JSON.stringify(headers)}`).toBe(404);
        expect((await json(res)).message).toBe("Chat not found.");
      }
    }
    expect(await messagesOf(w.teamA.sk, chat.id)).toHaveLength(2);
  });

  it("takes the chat's userId from x-user-id when the body has none", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.pk, { agentId: w.agentA }, { "x-user-id": "carol" });
    expect(chat.userId).toBe("carol");
    expect((await call("GET", `/chat/${chat.id}`, { key: w.teamA.pk })).status).toBe(404);
    expect((await call("GET", `/chat/${chat.id}`, { key: w.teamA.pk, headers: { "x-user-id": "carol" } })).status).toBe(200);

    const named = await call("POST", "/chat", { key: w.teamA.pk, body: { prompt: "Hello", userId: "frank" } });
    expect(named.status).toBe(200);
    expect((await json(named)).messages).toHaveLength(2);
    const prompt = await call("POST", "/chat", { key: w.teamA.pk, body: { prompt: "Hello" }, headers: { "x-user-id": "dave" } });
    expect(prompt.status).toBe(200);
    const created = await json(prompt);
    expect(created.userId).toBe("dave");
    expect(created.messages).toHaveLength(2);
  });

  it("reach chats made without a userId by id, while secret keys reach every chat of the team", async () => {
    const w = await chatWorld();
    const anonymous = await createChat(w.teamA.pk, { agentId: w.agentA });
    const owned = await createChat(w.teamA.sk, { agentId: w.agentA, userId: "erin" });
    expect((await call("GET", `/chat/${anonymous.id}`, { key: w.teamA.pk })).status).toBe(200);
    expect((await call("GET", `/chat/${anonymous.id}`, { key: w.teamA.pk, headers: { "x-user-id": "zed" } })).status).toBe(200);
    for (const id of [anonymous.id, owned.id]) {
      expect((await call("GET", `/chat/${id}`, { key: w.teamA.sk })).status).toBe(200);
      expect((await call("GET", `/team/${w.teamA.id}/chat/${id}`, { key: w.admin.userKey })).status).toBe(200);
    }
    // Another team's publishable key never reaches them, whatever it presents.
    expect((await call("GET", `/chat/${owned.id}`, { key: w.teamB.pk, headers: { "x-user-id": "erin" } })).status).toBe(404);
  });

  it("cannot list, change or delete chats (403 with the SPEC body)", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.pk, { agentId: w.agentA, userId: "alice" });
    for (const [method, path] of [
      ["GET", "/chat"],
      ["PUT", `/chat/${chat.id}`],
      ["DELETE", `/chat/${chat.id}`],
    ] as const) {
      const res = await call(method, path, { key: w.teamA.pk, body: method === "PUT" ? { title: "x" } : undefined });
      expect(res.status).toBe(403);
      expect((await json(res)).allowedEndpoints).toHaveLength(4);
    }
  });
});
