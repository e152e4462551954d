import { evictDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../src/chats/protocol";
import { deliverToSockets } from "../../src/events/sockets";
import { BASE, call, json } from "../helpers/world";
import { chatWorld, createAgent, createChat, isAssistantMessage, messagesOf, openSocket, readSse, send } from "./helpers";

type Frame<T extends ServerFrame["type"]> = Extract<ServerFrame, { type: T }>;
const is =
  <T extends ServerFrame["type"]>(type: T, chatId?: string) =>
  (f: ServerFrame): f is Frame<T> =>
    f.type === type && (chatId === undefined || ("chatId" in f && f.chatId === chatId));

describe("WebSocket /ws", () => {
  it("sends the connectionId first; a POST naming it pushes the user message, deltas and the final message", async () => {
    const w = await chatWorld();
    const echo = await createAgent(w.teamA.sk, { name: "Echo", model: "openai:fake-echo" });
    const chat = await createChat(w.teamA.sk, { agentId: echo });
    const socket = await openSocket("/ws", w.teamA.sk);
    expect(socket.frames[0]).toEqual({ type: "connection", connectionId: socket.connectionId });
    expect(socket.connectionId).toMatch(/^conn_/);

    const res = await send(w.teamA.sk, chat.id, { content: "streaming works", connectionId: socket.connectionId });
    expect(res.status).toBe(200);
    const answer = await json(res);
    const final = await socket.waitFor(isAssistantMessage(answer.id));
    expect(final.message).toEqual(answer);

    const mine = socket.frames.filter((f) => "chatId" in f && f.chatId === chat.id);
    expect(mine[0]).toEqual({ type: "subscribed", chatId: chat.id });
    expect(mine[1]).toMatchObject({ type: "message", message: { role: "user", content: "streaming works" } });
    const deltas = mine.filter(is("delta"));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.messageId === answer.id && d.agentId === echo)).toBe(true);
    expect(deltas.map((d) => d.delta).join("")).toBe(answer.content);
    expect(mine.at(-1)).toEqual(final);

    // The socket stays bound: the next POST (without connectionId) is pushed too.
    const next = await json(await send(w.teamA.sk, chat.id, { content: "again" }));
    await socket.waitFor(isAssistantMessage(next.id));
    socket.send({ type: "ping" });
    await socket.waitFor(is("pong"));
    socket.ws.close(1000, "done");
  });

  it("keeps pushing to a socket after its host and the chat's object were evicted (hibernation)", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const socket = await openSocket("/ws", w.teamA.sk);
    await json(await send(w.teamA.sk, chat.id, { content: "first", connectionId: socket.connectionId }));
    await evictDurableObject(env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(socket.connectionId)));
    await evictDurableObject(env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chat.id)));
    const second = await json(await send(w.teamA.sk, chat.id, { content: "second" }));
    await socket.waitFor(isAssistantMessage(second.id));
    socket.send({ type: "ping" });
    await socket.waitFor(is("pong"));
  });

  it("accepts the key as ?apiKey= and a publishable key with ?userId=, limited to that user's chats", async () => {
    const w = await chatWorld();
    const mine = await createChat(w.teamA.pk, { agentId: w.agentA, userId: "alice" });
    const theirs = await createChat(w.teamA.pk, { agentId: w.agentA, userId: "bob" });
    const socket = await openSocket(`/ws?apiKey=${w.teamA.pk}&userId=alice`);

    socket.send({ type: "subscribe", chatId: theirs.id });
    const refused = await socket.waitFor(is("error", theirs.id));
    expect(refused).toMatchObject({ status: 404, message: "Chat not found." });
    const bound = await send(w.teamA.pk, theirs.id, { content: "x", connectionId: socket.connectionId }, { "x-user-id": "bob" });
    expect(bound.status).toBe(400);

    socket.send({ type: "subscribe", chatId: mine.id });
    await socket.waitFor(is("subscribed", mine.id));
    const answer = await json(await send(w.teamA.pk, mine.id, { content: "Hello" }, { "x-user-id": "alice" }));
    await socket.waitFor(isAssistantMessage(answer.id));
    // Bob's chat moved on too, and nothing of it reached Alice's socket.
    expect((await send(w.teamA.pk, theirs.id, { content: "Bob here" }, { "x-user-id": "bob" })).status).toBe(200);
    socket.send({ type: "ping" });
    await socket.waitFor(is("pong"));
    expect(socket.frames.filter((f) => "chatId" in f && f.chatId === theirs.id && f.type !== "error")).toEqual([]);

    socket.send({ type: "subscribe_events", events: ["agent.updated"] });
    const eventsRefused = await socket.waitFor((f) => f.type === "error" && f.status === 403);
    expect(eventsRefused).toMatchObject({ error: "Forbidden" });
  });

  it("isolates teams: another team's socket can neither subscribe nor be named in a POST", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const intruder = await openSocket("/ws", w.teamB.sk);
    intruder.send({ type: "subscribe", chatId: chat.id });
    expect(await intruder.waitFor(is("error", chat.id))).toMatchObject({ status: 404 });

    const res = await send(w.teamA.sk, chat.id, { content: "secret", connectionId: intruder.connectionId });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toContain("connectionId");
    const prompt = await call("POST", "/chat", { key: w.teamA.sk, body: { prompt: "secret", connectionId: intruder.connectionId } });
    expect(prompt.status).toBe(400);
    const ok = await json(await send(w.teamA.sk, chat.id, { content: "secret" }));
    expect(ok.role).toBe("assistant");
    intruder.send({ type: "ping" });
    await intruder.waitFor(is("pong"));
    expect(intruder.frames.map((f) => f.type)).toEqual(["connection", "error", "pong"]);
    // The refused request stored nothing; the prompt form created no chat.
    expect(await messagesOf(w.teamA.sk, chat.id)).toHaveLength(2);
    expect((await json(await call("GET", "/chat", { key: w.teamA.sk }))).chats).toHaveLength(1);
  });

  it("follows one chat from GET /chat/:chatId/ws, with routing frames in a supervisor chat", async () => {
    const w = await chatWorld();
    const billing = await createAgent(w.teamA.sk, { name: "Billing", description: "Invoices, payments and refunds." });
    const shipping = await createAgent(w.teamA.sk, { name: "Shipping", description: "Deliveries, parcels and tracking." });
    const supervisor = await createAgent(w.teamA.sk, { name: "Desk", type: "supervisor", subAgents: [billing, shipping] });
    const chat = await createChat(w.teamA.sk, { agentId: supervisor });
    const sockets = await Promise.all([openSocket(`/chat/${chat.id}/ws`, w.teamA.sk), openSocket(`/chat/${chat.id}/ws?apiKey=${w.teamA.pk}`)]);
    for (const s of sockets) {
      await s.waitFor(is("subscribed", chat.id));
      expect(s.frames[1]).toEqual({ type: "subscribed", chatId: chat.id });
    }

    const answer = await json(await send(w.teamA.sk, chat.id, { content: "Where is my parcel? The delivery is late." }));
    expect(answer.agentId).toBe(shipping);
    for (const s of sockets) {
      await s.waitFor(isAssistantMessage(answer.id));
      const routing = s.frames.find(is("routing"));
      expect(routing).toMatchObject({ chatId: chat.id, agentId: shipping, agentName: "Shipping" });
      const types = s.frames.map((f) => f.type);
      expect(types.indexOf("routing")).toBeGreaterThan(types.indexOf("message"));
      expect(types.lastIndexOf("routing")).toBeLessThan(types.indexOf("delta"));
    }

    // Another team's key, or a publishable key of another end user, cannot open it.
    const other = await exports.default.fetch(
      new Request(`${BASE}/chat/${chat.id}/ws`, { headers: { upgrade: "websocket", "x-api-key": w.teamB.sk } }),
    );
    expect(other.status).toBe(404);
    const owned = await createChat(w.teamA.sk, { agentId: billing, userId: "alice" });
    const wrongUser = await exports.default.fetch(
      new Request(`${BASE}/chat/${owned.id}/ws?apiKey=${w.teamA.pk}&userId=bob`, { headers: { upgrade: "websocket" } }),
    );
    expect(wrongUser.status).toBe(404);
    const notUpgrade = await call("GET", "/ws", { key: w.teamA.sk });
    expect(notUpgrade.status).toBe(426);
    expect((await call("GET", "/ws")).status).toBe(401);
  });

  it("pushes failures as error frames and tells followers when the chat is deleted", async () => {
    const w = await chatWorld();
    const broken = await createAgent(w.teamA.sk, { name: "Broken", model: "openai:fake-500" });
    const chat = await createChat(w.teamA.sk, { agentId: broken });
    const socket = await openSocket("/ws", w.teamA.sk);
    const res = await send(w.teamA.sk, chat.id, { content: "hello?", connectionId: socket.connectionId });
    expect(res.status).toBe(502);
    const body = await json(res);
    expect(await socket.waitFor(is("error", chat.id))).toMatchObject({ status: 502, error: "Bad Gateway", messageId: body.userMessageId });

    expect((await call("DELETE", `/chat/${chat.id}`, { key: w.teamA.sk })).status).toBe(204);
    await socket.waitFor(is("chat_deleted", chat.id));
  });

  it("subscribes secret-key sockets to platform events of their own team", async () => {
    const w = await chatWorld();
    const socketA = await openSocket("/ws", w.teamA.sk);
    const socketB = await openSocket("/ws", w.teamB.sk);
    socketA.send({ type: "subscribe_events", events: ["agent.updated"] });
    socketB.send({ type: "subscribe_events", events: ["*"] });
    expect(await socketA.waitFor(is("events_subscribed"))).toEqual({ type: "events_subscribed", events: ["agent.updated"] });
    await socketB.waitFor(is("events_subscribed"));
    socketA.send({ type: "subscribe_events", events: ["nope"] });
    expect(await socketA.waitFor(is("error"))).toMatchObject({ status: 400 });

    // End to end: the change commits an agent.updated event; the events consumer pushes it.
    const put = await call("PUT", `/agent/${w.agentA}`, { key: w.teamA.sk, body: { description: "Now with sockets." } });
    expect(put.status).toBe(200);
    const pushed = await socketA.waitFor(
      (f) => f.type === "event" && f.event.type === "agent.updated" && f.event.data.description === "Now with sockets.",
    );
    expect(pushed).toMatchObject({ event: { teamId: w.teamA.id, data: { id: w.agentA } } });

    // Only the types a socket asked for, only its own team's.
    const fileEvent = { id: "evt_test2", type: "file.ready" as const, createdAt: new Date().toISOString(), teamId: w.teamA.id, data: {} };
    await deliverToSockets(env, fileEvent);
    socketA.send({ type: "ping" });
    await socketA.waitFor(is("pong"));
    expect(socketA.frames.filter(is("event")).map((f) => f.event.type)).not.toContain("file.ready");
    socketB.send({ type: "ping" });
    await socketB.waitFor(is("pong"));
    expect(socketB.frames.filter(is("event")).every((f) => f.event.teamId === w.teamB.id)).toBe(true);

    // A closed socket is forgotten.
    socketA.ws.close(1000, "bye");
    await expect
      .poll(async () => (await env.DB.prepare("SELECT count(*) AS n FROM socket_event_subscriptions WHERE team_id = ?").bind(w.teamA.id).first<{ n: number }>())?.n)
      .toBe(0);
  });
});

describe("server-sent events", () => {
  it("streams the turn as SSE with Accept: text/event-stream", async () => {
    const w = await chatWorld();
    const echo = await createAgent(w.teamA.sk, { name: "Echo", model: "openai:fake-echo" });
    const chat = await createChat(w.teamA.sk, { agentId: echo });
    const res = await send(w.teamA.sk, chat.id, { content: "stream me", id: "s1" }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
    const frames = await readSse(res);
    expect(frames[0]).toMatchObject({ type: "message", message: { role: "user", content: "stream me", clientId: "s1" } });
    const final = frames.at(-1) as Frame<"message">;
    expect(final.message).toMatchObject({ role: "assistant", content: "You said: stream me" });
    const deltas = frames.filter(is("delta"));
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((d) => d.delta).join("")).toBe(final.message.content);
    expect((await messagesOf(w.teamA.sk, chat.id)).map((m) => m.id)).toEqual([frames[0]?.type === "message" ? frames[0].message.id : "", final.message.id]);

    // A retry with the same id replays the stored exchange.
    const replay = await readSse(await send(w.teamA.sk, chat.id, { content: "stream me", id: "s1" }, { accept: "text/event-stream" }));
    expect(replay.map((f) => (f.type === "message" ? f.message.id : f.type))).toEqual([
      (frames[0] as Frame<"message">).message.id,
      final.message.id,
    ]);
  });

  it("answers refusals as JSON errors and a failure after the user message as an error event", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    expect((await call("DELETE", `/agent/${w.agentA}`, { key: w.teamA.sk })).status).toBe(204);
    const refused = await send(w.teamA.sk, chat.id, { content: "hi" }, { accept: "text/event-stream" });
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toContain("application/json");

    const broken = await createAgent(w.teamA.sk, { name: "Broken", model: "openai:fake-500" });
    const chat2 = await createChat(w.teamA.sk, { agentId: broken });
    const res = await send(w.teamA.sk, chat2.id, { content: "hi" }, { accept: "text/event-stream" });
    expect(res.status).toBe(200);
    const frames = await readSse(res);
    expect(frames.map((f) => f.type)).toEqual(["message", "error"]);
    expect(frames[1]).toMatchObject({ status: 502, error: "Bad Gateway" });
  });
});
