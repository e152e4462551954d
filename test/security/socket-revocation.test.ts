import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ServerFrame } from "../../src/chats/protocol";
import { deliverToSockets } from "../../src/events/sockets";
import { KEY_CACHE_TTL_MS } from "../../src/keys/lookup";
import { chatWorld, createChat, openSocket, send, type TestSocket } from "../chats/helpers";
import { call, insertKey } from "../helpers/world";

/**
 * README: "a revoked key stops working within 5 seconds everywhere". A WebSocket is opened once
 * with a key and then lives for hours: it must not keep receiving the team's chats and events
 * after its key is revoked, or after its user lost the OWNER/ADMIN role.
 */

const is =
  <T extends ServerFrame["type"]>(type: T) =>
  (f: ServerFrame): f is Extract<ServerFrame, { type: T }> =>
    f.type === type;

/** The close code the server sent, or "still open" after 8 s (so that a failure is quick). */
function closed(socket: TestSocket): Promise<number | "still open"> {
  return Promise.race([
    new Promise<number>((resolve) => socket.ws.addEventListener("close", (e) => resolve((e as CloseEvent).code))),
    scheduler.wait(8_000).then(() => "still open" as const),
  ]);
}

async function revoke(ownerKey: string, teamId: string, keyId: string) {
  const res = await call("DELETE", `/team/${teamId}/keys/${keyId}`, { key: ownerKey });
  expect(res.status).toBe(204);
}

describe("WebSockets after their key stops being valid", { timeout: 30_000 }, () => {
  it("a socket whose secret key was revoked can no longer subscribe and is closed", async () => {
    const w = await chatWorld();
    const sk = await insertKey("secret", { teamId: w.teamA.id });
    const socket = await openSocket("/ws", sk.key);
    const closing = closed(socket);
    await revoke(w.owner.userKey, w.teamA.id, sk.id);

    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    socket.send({ type: "subscribe", chatId: chat.id });
    socket.send({ type: "subscribe_events", events: ["*"] });
    expect(await closing).toBe(1008);
    expect(socket.frames.some((f) => f.type === "subscribed" || f.type === "events_subscribed")).toBe(false);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM socket_event_subscriptions WHERE team_id = ?")
      .bind(w.teamA.id)
      .first<{ n: number }>();
    expect(rows?.n).toBe(0);
  });

  it("a subscribed socket stops getting chat frames and events within the key cache bound after revocation", async () => {
    const w = await chatWorld();
    const sk = await insertKey("secret", { teamId: w.teamA.id });
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const socket = await openSocket(`/chat/${chat.id}/ws`, sk.key);
    socket.send({ type: "subscribe_events", events: ["*"] });
    await socket.waitFor(is("events_subscribed"));
    const closing = closed(socket);

    await revoke(w.owner.userKey, w.teamA.id, sk.id);
    await scheduler.wait(KEY_CACHE_TTL_MS + 200);

    expect((await send(w.teamA.sk, chat.id, { content: "After the revocation: private." })).status).toBe(200);
    await deliverToSockets(env, { id: "evt_rev", type: "file.ready", createdAt: new Date().toISOString(), teamId: w.teamA.id, data: { secret: 1 } });
    expect(await closing).toBe(1008);
    const leaked = socket.frames.filter(
      (f) => (f.type === "message" && f.message.content.includes("private")) || (f.type === "event" && f.event.id === "evt_rev"),
    );
    expect(leaked).toEqual([]);
  });

  it("a publishable key's socket is closed once the key is revoked", async () => {
    const w = await chatWorld();
    const pk = await insertKey("publishable", { teamId: w.teamA.id });
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const socket = await openSocket("/ws", pk.key);
    const closing = closed(socket);
    await revoke(w.owner.userKey, w.teamA.id, pk.id);
    socket.send({ type: "subscribe", chatId: chat.id });
    expect(await closing).toBe(1008);
    // Nor can the revoked socket be attached by a POST naming its connectionId.
    const res = await send(w.teamA.sk, chat.id, { content: "hi", connectionId: socket.connectionId });
    expect(res.status).toBe(400);
  });

  it("a user key's socket under /team/{teamId}/ws is closed once the user is no longer ADMIN there", async () => {
    const w = await chatWorld();
    const socket = await openSocket(`/team/${w.teamA.id}/ws`, w.admin.userKey);
    const closing = closed(socket);
    const demote = await call("PUT", `/team/${w.teamA.id}/members/${w.admin.id}`, { key: w.owner.userKey, body: { role: "MEMBER" } });
    expect(demote.status).toBe(200);
    socket.send({ type: "subscribe_events", events: ["*"] });
    expect(await closing).toBe(1008);
    expect(socket.frames.some(is("events_subscribed"))).toBe(false);
  });

  it("a socket whose key is still valid keeps working", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const socket = await openSocket(`/team/${w.teamA.id}/ws`, w.owner.userKey);
    socket.send({ type: "subscribe", chatId: chat.id });
    await socket.waitFor(is("subscribed"));
    expect((await send(w.teamA.sk, chat.id, { content: "hello" })).status).toBe(200);
    await socket.waitFor((f) => f.type === "message" && f.message.role === "assistant");
  });
});
