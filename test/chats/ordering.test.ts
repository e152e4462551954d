import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { ChatSession } from "../../src/chats/chat-session";
import { json } from "../helpers/world";
import { chatWorld, createAgent, createChat, messagesOf, send } from "./helpers";

const sessionOf = (chatId: string) => env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chatId));

describe("one ChatSession per chat orders its messages", () => {
  it("answers 10 concurrent POSTs one after another: 20 messages, each answer right after its question", async () => {
    const w = await chatWorld();
    // fake-echo answers "You said: <message>", so every answer names its question.
    const echo = await createAgent(w.teamA.sk, { name: "Echo", model: "openai:fake-echo" });
    for (const agentId of [w.agentA, echo]) {
      const chat = await createChat(w.teamA.sk, { agentId });
      const responses = await Promise.all(
        Array.from({ length: 10 }, (_, i) => send(w.teamA.sk, chat.id, { content: `Question number ${i}`, id: `q${i}` })),
      );
      const answers = await Promise.all(responses.map(async (r) => (expect(r.status).toBe(200), json(r))));

      const stored = await messagesOf(w.teamA.sk, chat.id);
      expect(stored).toHaveLength(20);
      expect(stored.map((m) => m.role)).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 ? "assistant" : "user")));
      for (let i = 0; i < 10; i++) {
        const at = stored.findIndex((m) => m.clientId === `q${i}`);
        expect(at % 2).toBe(0);
        expect(stored[at]?.content).toBe(`Question number ${i}`);
        expect(stored[at + 1]?.id).toBe(answers[i]?.id);
        if (agentId === echo) expect(stored[at + 1]?.content).toBe(`You said: Question number ${i}`);
      }
      const seqs = await env.DB.prepare("SELECT seq FROM messages WHERE chat_id = ? ORDER BY seq").bind(chat.id).all<{ seq: number }>();
      expect(seqs.results.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    }
  }, 60_000);

  it("neither loses nor duplicates a message when the object is evicted or aborted between requests", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    expect((await send(w.teamA.sk, chat.id, { content: "one", id: "m1" })).status).toBe(200);
    await evictDurableObject(sessionOf(chat.id));
    expect((await send(w.teamA.sk, chat.id, { content: "two", id: "m2" })).status).toBe(200);
    await abortAllDurableObjects();
    // The retried first message is found in D1, not in the lost memory of the old instance.
    const retried = await send(w.teamA.sk, chat.id, { content: "one", id: "m1" });
    expect(retried.status).toBe(200);
    expect((await send(w.teamA.sk, chat.id, { content: "three", id: "m3" })).status).toBe(200);
    await evictDurableObject(sessionOf(chat.id));
    const stored = await messagesOf(w.teamA.sk, chat.id);
    expect(stored.map((m) => `${m.role}:${m.clientId ?? ""}`)).toEqual([
      "user:m1",
      "assistant:",
      "user:m2",
      "assistant:",
      "user:m3",
      "assistant:",
    ]);
    expect((await json(retried)).id).toBe(stored[1]?.id);
  });

  it("keeps the chat's subscribers in the object's storage across eviction", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const stub = sessionOf(chat.id);
    expect(await stub.subscribe("conn_test1")).toBe(true);
    await evictDurableObject(stub);
    const rows = await runInDurableObject(stub, (_instance: ChatSession, state) =>
      state.storage.sql.exec<{ connection_id: string }>("SELECT connection_id FROM subscribers").toArray(),
    );
    expect(rows.map((r) => r.connection_id)).toEqual(["conn_test1"]);
    // A POST pushes to it; the host has no socket, so the subscription is dropped ("gone").
    expect((await send(w.teamA.sk, chat.id, { content: "hello" })).status).toBe(200);
    await expect
      .poll(() =>
        runInDurableObject(stub, (_i: ChatSession, state) =>
          state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM subscribers").one().n,
        ),
      )
      .toBe(0);
  });
});
