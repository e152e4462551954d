import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { MessageView, ServerFrame } from "../../src/chats/protocol";
import { BASE, call, createTeam, createWorld, json } from "../helpers/world";

export type Team = Awaited<ReturnType<typeof createTeam>>;

/** Creates an agent through the API (team secret key) and returns its id. */
export async function createAgent(sk: string, body: Record<string, unknown> = {}): Promise<string> {
  const res = await call("POST", "/agent", { key: sk, body: { name: "Helper", systemPrompt: "You are a helpful assistant.", ...body } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json(res)).id as string;
}

/** Two teams, each with one specialist agent. */
export async function chatWorld() {
  const w = await createWorld();
  const agentA = await createAgent(w.teamA.sk, { name: "Support", description: "Answers product questions." });
  const agentB = await createAgent(w.teamB.sk, { name: "Other", description: "Team B's agent." });
  return { ...w, agentA, agentB };
}

export async function createChat(key: string, body: Record<string, unknown>, headers?: Record<string, string>) {
  const res = await call("POST", "/chat", { key, body, headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return json(res);
}

export async function send(key: string, chatId: string, body: Record<string, unknown>, headers?: Record<string, string>) {
  return call("POST", `/chat/${chatId}/message`, { key, body: { role: "user", ...body }, headers });
}

export async function messagesOf(key: string, chatId: string, headers?: Record<string, string>): Promise<MessageView[]> {
  const res = await call("GET", `/chat/${chatId}/message`, { key, headers });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json<{ messages: MessageView[] }>(res)).messages;
}

/** A WebSocket opened through the Worker's fetch handler, with every frame it received. */
export type TestSocket = {
  ws: WebSocket;
  frames: ServerFrame[];
  connectionId: string;
  /** Resolves with the first frame (already received or to come) matching `match`. */
  waitFor<T extends ServerFrame>(match: (f: ServerFrame) => f is T): Promise<T>;
  waitFor(match: (f: ServerFrame) => boolean): Promise<ServerFrame>;
  send(frame: unknown): void;
};

export async function openSocket(path: string, key?: string, headers: Record<string, string> = {}): Promise<TestSocket> {
  const h: Record<string, string> = { upgrade: "websocket", ...headers };
  if (key) h["x-api-key"] = key;
  const res = await exports.default.fetch(new Request(BASE + path, { headers: h }));
  expect(res.status, res.status === 101 ? "" : await res.text()).toBe(101);
  const ws = res.webSocket as WebSocket;
  ws.accept();
  const frames: ServerFrame[] = [];
  const waiters: { match: (f: ServerFrame) => boolean; resolve: (f: ServerFrame) => void }[] = [];
  ws.addEventListener("message", (event) => {
    const frame = JSON.parse(event.data as string) as ServerFrame;
    frames.push(frame);
    for (const w of [...waiters]) {
      if (w.match(frame)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(frame);
      }
    }
  });
  const waitFor = (match: (f: ServerFrame) => boolean) => {
    const seen = frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise<ServerFrame>((resolve) => waiters.push({ match, resolve }));
  };
  const first = (await waitFor((f) => f.type === "connection")) as Extract<ServerFrame, { type: "connection" }>;
  return {
    ws,
    frames,
    connectionId: first.connectionId,
    waitFor: waitFor as TestSocket["waitFor"],
    send: (frame) => ws.send(JSON.stringify(frame)),
  };
}

export const isAssistantMessage =
  (id?: string) =>
  (f: ServerFrame): f is Extract<ServerFrame, { type: "message" }> =>
    f.type === "message" && f.message.role === "assistant" && (id === undefined || f.message.id === id);

/** Parses a text/event-stream body into frames (event name = frame type). */
export async function readSse(res: Response): Promise<ServerFrame[]> {
  const text = await res.text();
  const frames: ServerFrame[] = [];
  for (const block of text.split("\n\n")) {
    if (!block.trim()) continue;
    const lines = block.split("\n");
    const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
    const data = lines
      .filter((l) => l.startsWith("data: "))
      .map((l) => l.slice(6))
      .join("\n");
    const frame = JSON.parse(data) as ServerFrame;
    expect(frame.type).toBe(event);
    frames.push(frame);
  }
  return frames;
}
