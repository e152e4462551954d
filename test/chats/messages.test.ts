import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/world";
import { chatWorld, createAgent, createChat, messagesOf, send } from "./helpers";

async function eventsOf(teamId: string, type: string) {
  const rows = await env.DB.prepare("SELECT data FROM events WHERE team_id = ? AND type = ? ORDER BY rowid")
    .bind(teamId, type)
    .all<{ data: string }>();
  return rows.results.map((r) => JSON.parse(r.data) as Record<string, unknown>);
}

describe("messages", () => {
  it("stores the user message, answers with the assistant message and records both as events", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const res = await send(w.teamA.sk, chat.id, { content: "Hello!" });
    expect(res.status).toBe(200);
    const answer = await json(res);
    expect(answer).toMatchObject({ chatId: chat.id, role: "assistant", agentId: w.agentA, citations: [], clientId: null });
    expect(answer.id).toMatch(/^msg_/);
    expect(typeof answer.content).toBe("string");
    expect(answer.content.length).toBeGreaterThan(0);
    expect(answer.inputTokens).toBeGreaterThan(0);
    expect(answer.outputTokens).toBeGreaterThan(0);

    const stored = await messagesOf(w.teamA.sk, chat.id);
    expect(stored.map((m) => [m.role, m.content])).toEqual([
      ["user", "Hello!"],
      ["assistant", answer.content],
    ]);
    expect(stored[1]).toEqual(answer);
    expect(stored[0]).toMatchObject({ agentId: null, inputTokens: null, outputTokens: null });

    const created = await eventsOf(w.teamA.id, "message.created");
    expect(created.map((m) => m.id)).toEqual([stored[0]?.id, answer.id]);
  });

  it("accepts the prompt form on a chat, and refuses a bad body", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const res = await call("POST", `/chat/${chat.id}/message`, { key: w.teamA.sk, body: { prompt: "Hi there" } });
    expect(res.status).toBe(200);
    expect((await json(res)).role).toBe("assistant");
    expect((await messagesOf(w.teamA.sk, chat.id))[0]?.content).toBe("Hi there");

    for (const body of [{}, { role: "user" }, { content: "" }, { content: "a", prompt: "b" }, { content: "x", role: "assistant" }, { content: 5 }]) {
      const bad = await call("POST", `/chat/${chat.id}/message`, { key: w.teamA.sk, body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
    }
    const badConnection = await send(w.teamA.sk, chat.id, { content: "x", connectionId: "nope" });
    expect(badConnection.status).toBe(400);
    expect((await json(badConnection)).message).toContain("connectionId");
    // None of the refused requests stored anything.
    expect(await messagesOf(w.teamA.sk, chat.id)).toHaveLength(2);
  });

  it("does not store a retried message twice: the same client id returns the stored answer", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    const first = await json(await send(w.teamA.sk, chat.id, { content: "Where is my order?", id: "client-1" }));
    const again = await send(w.teamA.sk, chat.id, { content: "Where is my order?", id: "client-1" });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(first);

    const stored = await messagesOf(w.teamA.sk, chat.id);
    expect(stored).toHaveLength(2);
    expect(stored[0]?.clientId).toBe("client-1");

    // The id is per chat: another chat may use it; a different text under the same id is a conflict.
    const other = await createChat(w.teamA.sk, { agentId: w.agentA });
    expect((await send(w.teamA.sk, other.id, { content: "Hi", id: "client-1" })).status).toBe(200);
    const conflict = await send(w.teamA.sk, chat.id, { content: "Something else", id: "client-1" });
    expect(conflict.status).toBe(409);
    expect((await json(conflict)).message).toContain("client-1");
    expect(await messagesOf(w.teamA.sk, chat.id)).toHaveLength(2);
    expect((await send(w.teamA.sk, chat.id, { content: "x", id: "has spaces" })).status).toBe(400);
  });

  it("answers 409 when the chat's agent was deleted, and keeps the chat readable", async () => {
    const w = await chatWorld();
    const chat = await createChat(w.teamA.sk, { agentId: w.agentA });
    expect((await send(w.teamA.sk, chat.id, { content: "Hi" })).status).toBe(200);
    expect((await call("DELETE", `/agent/${w.agentA}`, { key: w.teamA.sk })).status).toBe(204);

    const res = await send(w.teamA.sk, chat.id, { content: "Still there?" });
    expect(res.status).toBe(409);
    expect((await json(res)).message).toContain("agent of this chat was deleted");
    const detail = await json(await call("GET", `/chat/${chat.id}`, { key: w.teamA.sk }));
    expect(detail.agentId).toBe(w.agentA);
    expect(detail.messages).toHaveLength(2);
    // Retrying an already answered message still returns its answer.
  });

  it("routes each message of a supervisor chat to a sub-agent and records who answered", async () => {
    const w = await chatWorld();
    const billing = await createAgent(w.teamA.sk, {
      name: "Billing",
      description: "Handles invoices, payments, billing questions and refunds.",
    });
    const shipping = await createAgent(w.teamA.sk, {
      name: "Shipping",
      description: "Handles shipping, deliveries, parcels, tracking and delayed packages.",
    });
    const supervisor = await createAgent(w.teamA.sk, { name: "Front desk", type: "supervisor", subAgents: [billing, shipping] });
    const chat = await createChat(w.teamA.sk, { agentId: supervisor });

    const parcel = await json(await send(w.teamA.sk, chat.id, { content: "My parcel is delayed, where is my delivery?" }));
    expect(parcel.agentId).toBe(shipping);
    const refund = await json(await send(w.teamA.sk, chat.id, { content: "I want a refund for my last invoice payment." }));
    expect(refund.agentId).toBe(billing);
    const stored = await messagesOf(w.teamA.sk, chat.id);
    expect(stored.map((m) => m.agentId)).toEqual([null, shipping, null, billing]);

    // Deleted sub-agents are skipped; with none left the chat answers 409.
    expect((await call("DELETE", `/agent/${shipping}`, { key: w.teamA.sk })).status).toBe(204);
    const afterDelete = await json(await send(w.teamA.sk, chat.id, { content: "My parcel is delayed again." }));
    expect(afterDelete.agentId).toBe(billing);
    expect((await call("DELETE", `/agent/${billing}`, { key: w.teamA.sk })).status).toBe(204);
    const none = await send(w.teamA.sk, chat.id, { content: "Anyone?" });
    expect(none.status).toBe(409);
    expect((await json(none)).message).toContain("sub-agents");
    expect(await messagesOf(w.teamA.sk, chat.id)).toHaveLength(6);
  });

  it("answers 502 when the model provider fails: the user message stays, no assistant message", async () => {
    const w = await chatWorld();
    // test/global/fake-openai.ts: "fake-500" answers HTTP 500 with a body that must never reach clients.
    const remote = await createAgent(w.teamA.sk, { name: "Remote", model: "openai:fake-500" });
    const chat = await createChat(w.teamA.sk, { agentId: remote });
    const res = await send(w.teamA.sk, chat.id, { content: "Hello?", id: "retry-me" });
    expect(res.status).toBe(502);
    const body = await json(res);
    expect(body).toMatchObject({ error: "Bad Gateway", chatId: chat.id });
    expect(JSON.stringify(body)).not.toMatch(/fake|secret|upstream|stack/i);
    const stored = await messagesOf(w.teamA.sk, chat.id);
    expect(stored.map((m) => m.role)).toEqual(["user"]);
    expect(body.userMessageId).toBe(stored[0]?.id);

    // A retry with the same id does not add the message again (the turn is tried again and fails again).
    expect((await send(w.teamA.sk, chat.id, { content: "Hello?", id: "retry-me" })).status).toBe(502);
    expect(await messagesOf(w.teamA.sk, chat.id)).toHaveLength(1);

    // Pointing the chat's agent at a working model answers the retry right after its question.
    expect((await call("PUT", `/agent/${remote}`, { key: w.teamA.sk, body: { model: "local" } })).status).toBe(200);
    const answered = await send(w.teamA.sk, chat.id, { content: "Hello?", id: "retry-me" });
    expect(answered.status).toBe(200);
    const final = await messagesOf(w.teamA.sk, chat.id);
    expect(final.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(final[1]?.id).toBe((await json(answered)).id);

    // A failed message followed by others cannot be answered late: 409.
    expect((await call("PUT", `/agent/${remote}`, { key: w.teamA.sk, body: { model: "openai:fake-500" } })).status).toBe(200);
    expect((await send(w.teamA.sk, chat.id, { content: "First", id: "f1" })).status).toBe(502);
    expect((await send(w.teamA.sk, chat.id, { content: "Second", id: "f2" })).status).toBe(502);
    expect((await call("PUT", `/agent/${remote}`, { key: w.teamA.sk, body: { model: "local" } })).status).toBe(200);
    expect((await send(w.teamA.sk, chat.id, { content: "First", id: "f1" })).status).toBe(409);
    expect((await send(w.teamA.sk, chat.id, { content: "Second", id: "f2" })).status).toBe(200);
    expect((await messagesOf(w.teamA.sk, chat.id)).map((m) => m.content.slice(0, 6))).toEqual([
      "Hello?",
      (final[1]?.content ?? "").slice(0, 6),
      "First",
      "Second",
      expect.any(String),
    ]);
  });

  it("answers 504 when the model times out, also after part of the answer was streamed", async () => {
    const w = await chatWorld();
    for (const model of ["openai:fake-hang", "openai:fake-hang-stream"]) {
      const agentId = await createAgent(w.teamA.sk, { name: "Slow", model });
      const chat = await createChat(w.teamA.sk, { agentId });
      const res = await send(w.teamA.sk, chat.id, { content: "Are you there?" });
      expect(res.status, model).toBe(504);
      expect(await json(res)).toMatchObject({ error: "Gateway Timeout", chatId: chat.id });
      expect((await messagesOf(w.teamA.sk, chat.id)).map((m) => m.role)).toEqual(["user"]);
    }
  }, 20_000);
});

describe("the prompt form of POST /chat", () => {
  it("opens a chat with the team's default agent and answers the first message", async () => {
    const w = await chatWorld();
    const res = await call("POST", "/chat", { key: w.teamA.sk, body: { prompt: "Hello, who are you?", userId: "v1" } });
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ agentId: w.agentA, teamId: w.teamA.id, userId: "v1" });
    expect(body.id).toMatch(/^chat_/);
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(body.messages[0].content).toBe("Hello, who are you?");
    expect(await messagesOf(w.teamA.sk, body.id)).toEqual(body.messages);
  });

  it("chooses the default agent: metadata defaultAgentId, else the oldest supervisor, else the oldest agent", async () => {
    const w = await chatWorld();
    const prompt = async () => (await json(await call("POST", "/chat", { key: w.teamA.sk, body: { prompt: "Hi" } }))).agentId;
    expect(await prompt()).toBe(w.agentA);

    const specialist = await createAgent(w.teamA.sk, { name: "Second" });
    const supervisor = await createAgent(w.teamA.sk, { name: "Boss", type: "supervisor", subAgents: [w.agentA] });
    await createAgent(w.teamA.sk, { name: "Boss 2", type: "supervisor", subAgents: [specialist] });
    expect(await prompt()).toBe(supervisor);

    const team = await call("PUT", `/team/${w.teamA.id}`, { key: w.owner.userKey, body: { metadata: { defaultAgentId: specialist } } });
    expect(team.status).toBe(200);
    expect(await prompt()).toBe(specialist);

    // A stale defaultAgentId falls back to the rule; agentId in the body wins over all.
    expect((await call("DELETE", `/agent/${specialist}`, { key: w.teamA.sk })).status).toBe(204);
    expect(await prompt()).toBe(supervisor);
    const explicit = await json(await call("POST", "/chat", { key: w.teamA.sk, body: { prompt: "Hi", agentId: w.agentA } }));
    expect(explicit.agentId).toBe(w.agentA);
  });

  it("answers 409 with a clear message when the team has no agent", async () => {
    const w = await chatWorld();
    const res = await call("POST", "/chat", { key: w.teamB.sk, body: { prompt: "Hi" } });
    expect(res.status).toBe(200);
    expect((await call("DELETE", `/agent/${w.agentB}`, { key: w.teamB.sk })).status).toBe(204);
    const none = await call("POST", "/chat", { key: w.teamB.sk, body: { prompt: "Hi" } });
    expect(none.status).toBe(409);
    expect((await json(none)).message).toContain("no agent");
  });

  it("keeps the chat and the user message when the first answer fails (502 names the chat)", async () => {
    const w = await chatWorld();
    const remote = await createAgent(w.teamA.sk, { name: "Remote", model: "openai:fake-400" });
    const res = await call("POST", "/chat", { key: w.teamA.sk, body: { prompt: "Hi", agentId: remote } });
    expect(res.status).toBe(502);
    const body = await json(res);
    expect(body.chatId).toMatch(/^chat_/);
    expect((await messagesOf(w.teamA.sk, body.chatId)).map((m) => m.role)).toEqual(["user"]);
  });
});
