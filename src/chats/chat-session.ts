import { DurableObject } from "cloudflare:workers";
import { liveSubAgents } from "../agents/service";
import { createDb, type Database } from "../db/client";
import type { EventSink, PlatformEvent } from "../events/emit";
import { keyStillAuthorized, type KeyHolder } from "../http/auth";
import { STATUS_NAMES } from "../http/errors";
import { KEY_CACHE_TTL_MS } from "../keys/lookup";
import { newId, nowIso } from "../lib/ids";
import { routeMessage, runAgentTurn, type AgentRef } from "../models/agent-loop";
import { ProviderError } from "../models/provider";
import { canReadChat, type ChatReader } from "./access";
import { ClientFrame, encodeFrame, type ChatFrame, type MessageView, type ServerFrame } from "./protocol";
import {
  answerTo,
  findByClientId,
  findChat,
  insertMessage,
  loadChatWithAgent,
  recentMessages,
  toMessageView,
  type AgentSnapshot,
  type MessageRow,
} from "./service";
import { forgetSocketEvents, subscribeSocketEvents } from "./realtime";
import { chatSession, connectionHost, isConnectionId } from "./objects";

/** Messages of the chat kept in memory as the model's history (the agent loop trims by tokens). */
const HISTORY_LIMIT = 200;
/** Longest a turn may take, model and tools included; then the client gets a 504. */
const TURN_TIMEOUT_MS = 120_000;
/** Sockets one chat pushes to, and chats one socket follows. */
const MAX_SUBSCRIBERS_PER_CHAT = 1000;
const MAX_CHATS_PER_SOCKET = 100;

export type SendInput = {
  chatId: string;
  teamId: string;
  /** The key of the request: the chat is read here, so this object answers 404 for a chat it may not read. */
  reader: ChatReader;
  content: string;
  /** The client's id of its user message: a repeated POST with it is answered from storage. */
  clientId?: string;
  /** A socket to bind to this chat before the turn (its frames then include this turn). */
  connectionId?: string;
};

export type FailureStatus = 400 | 404 | 409 | 500 | 502 | 504;

export type SendOutcome =
  | { ok: true; user: MessageView; assistant: MessageView; replayed: boolean; timing: TurnTiming }
  | { ok: false; status: FailureStatus; message: string; userMessageId?: string };

/**
 * Where a turn's time went, in ms (Server-Timing of the answer): waiting behind earlier turns of the
 * chat, reading the chat and agent, the two message writes, and the model layer (routing, answer).
 */
export type TurnTiming = { queueMs: number; loadMs: number; storeMs: number; routeMs: number; modelMs: number };

const noTiming = (): TurnTiming => ({ queueMs: 0, loadMs: 0, storeMs: 0, routeMs: 0, modelMs: 0 });

/** Receives the frames of one turn (the SSE stream of the POST that started it). */
export type FrameListener = (frame: ChatFrame) => void | Promise<void>;

/** What the Worker tells a new socket's host: the key it was opened with. */
export type SocketMeta = ChatReader & KeyHolder & {
  connectionId: string;
  /** Chats this socket follows. */
  chats: string[];
  /** Platform event types it asked for (secret and user keys only). */
  events: string[];
};

/** Internal header carrying SocketMeta from the Worker to the socket's host object. */
export const SOCKET_META_HEADER = "x-socket-meta";

type DeliveryTarget = { chatId: string; teamId: string; chatUserId: string | null };

const agentRef = (a: AgentSnapshot): AgentRef => ({ id: a.id, teamId: a.teamId, config: a.config });

function failure(status: FailureStatus, message: string, userMessageId?: string): SendOutcome {
  return userMessageId ? { ok: false, status, message, userMessageId } : { ok: false, status, message };
}

/** A failed model call as the client sees it: 504 for a timeout, 502 for anything else upstream. */
function providerFailure(err: unknown): { status: 502 | 504; message: string } | null {
  const timedOut =
    (err instanceof ProviderError && err.kind === "timeout") ||
    (err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError"));
  if (timedOut) return { status: 504, message: "The model did not answer in time. Your message was kept; retry it." };
  if (err instanceof ProviderError) {
    return { status: 502, message: "The model provider failed to answer. Your message was kept; retry it." };
  }
  return null;
}

/**
 * A Durable Object class with two roles, told apart by name (the only DO binding is CHAT_SESSION):
 *
 * - named by a chat id: the chat's sequencer. Every message of the chat goes through `send`, which
 *   queues turns explicitly (input gates do not hold across the awaits of D1 and model calls), so
 *   concurrent POSTs are answered one after another and each user message is directly followed by
 *   its answer. The next seq comes from D1 (max seq, reloaded after eviction or any write error), so
 *   nothing is lost or duplicated across restarts. It pushes the chat's frames to its subscribers.
 * - named by a connectionId: the host of one WebSocket (hibernation API). It knows the key the
 *   socket was opened with (attachment), checks every chat binding and delivery against it, and
 *   handles the client's frames (subscribe, unsubscribe, subscribe_events, ping).
 *
 * Storage: chat objects keep one SQLite table, subscribers(connection_id), the sockets that follow
 * the chat; socket hosts keep nothing but the socket's attachment (SocketMeta).
 */
export class ChatSession extends DurableObject<Env> {
  // ---- chat role ----------------------------------------------------------------------------
  private tail: Promise<unknown> = Promise.resolve();
  /** Recent messages and the next seq; null until loaded from D1 (and after a failed write). */
  private log: { nextSeq: number; recent: MessageRow[] } | null = null;
  private subscribers: Set<string> | null = null;
  private outboxes = new Map<string, ChatFrame[]>();

  /**
   * Stores the user message, runs the agent (routing first in a supervisor chat) and stores the
   * answer. Never throws for an expected failure: the outcome carries the HTTP status.
   */
  async send(input: SendInput, listener?: FrameListener): Promise<SendOutcome> {
    const pending: Promise<unknown>[] = [];
    let target: DeliveryTarget = { chatId: input.chatId, teamId: input.teamId, chatUserId: null };
    const emit = (frame: ChatFrame) => {
      if (listener) pending.push(Promise.resolve().then(() => listener(frame)).catch(() => undefined));
      this.push(frame, target);
    };

    const queuedAt = performance.now();
    const outcome = await this.enqueue(async () => {
      try {
        return await this.turn(input, emit, (t) => (target = t), performance.now() - queuedAt);
      } catch (err) {
        console.error(JSON.stringify({ error: "chat turn failed", chatId: input.chatId, cause: String(err) }));
        this.log = null;
        const message = "The message could not be processed. Retry it.";
        emit({ type: "error", chatId: input.chatId, status: 500, error: "Internal Server Error", message } satisfies ServerFrame);
        return failure(500, message);
      }
    });
    // Every frame of this turn reached the listener before the caller sees the outcome.
    await Promise.all(pending);
    return outcome;
  }

  /** Follows the chat from a socket host that has already checked the socket may read it. */
  subscribe(connectionId: string): boolean {
    const subs = this.subs();
    if (subs.has(connectionId)) return true;
    if (subs.size >= MAX_SUBSCRIBERS_PER_CHAT) return false;
    subs.add(connectionId);
    this.ctx.storage.sql.exec("INSERT OR IGNORE INTO subscribers (connection_id) VALUES (?)", connectionId);
    return true;
  }

  unsubscribe(connectionId: string): void {
    this.subs().delete(connectionId);
    this.ctx.storage.sql.exec("DELETE FROM subscribers WHERE connection_id = ?", connectionId);
  }

  /** The chat was deleted: tell the sockets, then forget them and the cached messages. */
  forget(chatId: string, teamId: string): void {
    this.push({ type: "chat_deleted", chatId } satisfies ServerFrame, { chatId, teamId, chatUserId: null });
    this.subscribers = new Set();
    this.ctx.storage.sql.exec("DELETE FROM subscribers");
    this.log = null;
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task);
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async turn(
    input: SendInput,
    emit: (frame: ChatFrame) => void,
    setTarget: (t: DeliveryTarget) => void,
    queueMs: number,
  ): Promise<SendOutcome> {
    const { chatId, teamId } = input;
    const timing = { ...noTiming(), queueMs };
    const loadStart = performance.now();
    const db = createDb(this.env.DB);
    const loaded = await loadChatWithAgent(db, teamId, chatId);
    if (!loaded || !canReadChat(input.reader, loaded.chat)) return failure(404, "Chat not found.");
    const { chat, agent } = loaded;
    setTarget({ chatId, teamId, chatUserId: chat.userId });

    if (input.connectionId && !(await this.bindConnection(input.connectionId, { chatId, teamId, chatUserId: chat.userId }))) {
      return failure(
        400,
        "connectionId does not name an open WebSocket connection that may read this chat. Open GET /ws and use the connectionId of its first frame.",
      );
    }

    const log = await this.loadLog(db, chatId);
    let user: MessageRow | undefined;
    if (input.clientId) {
      user = log.recent.find((m) => m.clientId === input.clientId) ?? (await findByClientId(db, chatId, input.clientId));
      if (user) {
        if (user.role !== "user" || user.content !== input.content) {
          return failure(409, `This chat already has a different message with id "${input.clientId}". Use a new id.`);
        }
        const seq = user.seq;
        const answer = log.recent.find((m) => m.seq === seq + 1 && m.role === "assistant") ?? (await answerTo(db, chatId, seq));
        if (answer) {
          return { ok: true, user: toMessageView(user), assistant: toMessageView(answer), replayed: true, timing };
        }
        if (seq !== log.nextSeq - 1) {
          return failure(
            409,
            `The message with id "${input.clientId}" was not answered and later messages followed it. Send it again with a new id.`,
          );
        }
        // Its turn failed and nothing came after it: answer it now, right after it.
      }
    }

    if (!agent) return failure(409, "The agent of this chat was deleted. Start a new chat with another agent.");
    let subAgents: AgentSnapshot[] = [];
    if (agent.type === "supervisor") {
      subAgents = await liveSubAgents(db, teamId, agent.config.subAgents);
      if (!subAgents.length) {
        return failure(409, "None of this supervisor's sub-agents exist any more. Give it sub-agents with PUT /agent/{id}.");
      }
    }

    const sink: EventSink = { env: this.env, db, waitUntil: (p) => this.ctx.waitUntil(p) };
    timing.loadMs = performance.now() - loadStart;
    if (!user) {
      const row: MessageRow = {
        id: newId("msg"),
        chatId,
        teamId,
        seq: log.nextSeq,
        role: "user",
        content: input.content,
        agentId: null,
        inputTokens: null,
        outputTokens: null,
        citations: [],
        clientId: input.clientId ?? null,
        createdAt: nowIso(),
      };
      const storeStart = performance.now();
      const stored = await this.append(sink, row);
      timing.storeMs += performance.now() - storeStart;
      if (stored) return stored;
      user = row;
    }
    emit({ type: "message", chatId, message: toMessageView(user) } satisfies ServerFrame);

    const userSeq = user.seq;
    const history = log.recent
      .filter((m) => m.seq < userSeq)
      .map((m) => ({ role: m.role, content: m.content }));

    let answering = agent;
    if (agent.type === "supervisor") {
      const routeStart = performance.now();
      const decision = await routeMessage({
        env: this.env,
        supervisor: agentRef(agent),
        subAgents: subAgents.map(agentRef),
        userMessage: user.content,
      }).catch((err: unknown) => {
        // Routing must never fail the user: the first sub-agent answers (README, section chat).
        console.error(JSON.stringify({ error: "routing failed, first sub-agent answers", chatId, cause: String(err) }));
        return { agentId: "", reason: "routing failed; the first sub-agent answers", fallback: true };
      });
      timing.routeMs = performance.now() - routeStart;
      const chosen = subAgents.find((a) => a.id === decision.agentId);
      answering = chosen ?? (subAgents[0] as AgentSnapshot);
      emit({
        type: "routing",
        chatId,
        messageId: user.id,
        agentId: answering.id,
        agentName: answering.name,
        reason: chosen ? decision.reason : "no valid sub-agent was chosen; the first sub-agent answers",
        fallback: chosen ? decision.fallback : true,
      } satisfies ServerFrame);
    }

    const assistantId = newId("msg");
    const answeringId = answering.id;
    let result;
    // A timer cleared when the turn ends (AbortSignal.timeout would keep the object busy for its whole span).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException("The turn took too long", "TimeoutError")), TURN_TIMEOUT_MS);
    const modelStart = performance.now();
    try {
      result = await runAgentTurn({
        env: this.env,
        agent: agentRef(answering),
        history,
        userMessage: user.content,
        onDelta: (delta) => emit({ type: "delta", chatId, messageId: assistantId, agentId: answeringId, delta } satisfies ServerFrame),
        signal: deadline.signal,
      });
    } catch (err) {
      const mapped = providerFailure(err);
      if (!mapped) throw err;
      console.error(JSON.stringify({ error: "model provider failed", chatId, agentId: answeringId, cause: String(err) }));
      emit({
        type: "error",
        chatId,
        messageId: user.id,
        status: mapped.status,
        error: STATUS_NAMES[mapped.status] ?? "Error",
        message: mapped.message,
      } satisfies ServerFrame);
      return failure(mapped.status, mapped.message, user.id);
    } finally {
      clearTimeout(timer);
      timing.modelMs = performance.now() - modelStart;
    }

    const answer: MessageRow = {
      id: assistantId,
      chatId,
      teamId,
      seq: log.nextSeq,
      role: "assistant",
      content: result.content,
      agentId: answeringId,
      inputTokens: result.usage.inputTokens,
      outputTokens: result.usage.outputTokens,
      citations: result.citations,
      clientId: null,
      createdAt: nowIso(),
    };
    const storeStart = performance.now();
    const stored = await this.append(sink, answer);
    timing.storeMs += performance.now() - storeStart;
    if (stored) return stored;
    emit({ type: "message", chatId, message: toMessageView(answer) } satisfies ServerFrame);
    return { ok: true, user: toMessageView(user), assistant: toMessageView(answer), replayed: false, timing };
  }

  private async loadLog(db: Database, chatId: string) {
    if (!this.log) {
      const recent = await recentMessages(db, chatId, HISTORY_LIMIT);
      this.log = { nextSeq: (recent.at(-1)?.seq ?? -1) + 1, recent };
    }
    return this.log;
  }

  /** Writes one message (with its event); a failure outcome when the chat was deleted meanwhile. */
  private async append(sink: EventSink, row: MessageRow): Promise<SendOutcome | null> {
    try {
      await insertMessage(sink, row);
    } catch (err) {
      this.log = null;
      if (!(await findChat(sink.db, row.teamId, row.chatId))) return failure(404, "The chat was deleted.");
      throw err;
    }
    const log = this.log;
    if (log) {
      log.recent.push(row);
      if (log.recent.length > HISTORY_LIMIT) log.recent.splice(0, log.recent.length - HISTORY_LIMIT);
      log.nextSeq = row.seq + 1;
    }
    return null;
  }

  private subs(): Set<string> {
    if (!this.subscribers) {
      this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS subscribers (connection_id TEXT PRIMARY KEY)");
      const rows = this.ctx.storage.sql.exec<{ connection_id: string }>("SELECT connection_id FROM subscribers").toArray();
      this.subscribers = new Set(rows.map((r) => r.connection_id));
    }
    return this.subscribers;
  }

  private async bindConnection(connectionId: string, target: DeliveryTarget): Promise<boolean> {
    if (!isConnectionId(connectionId)) return false;
    const attached = await connectionHost(this.env, connectionId).attachChat(target);
    return attached && this.subscribe(connectionId);
  }

  /**
   * Queues the frame for every subscriber. One delivery per socket is in flight at a time and
   * frames queued meanwhile go together in the next one: order is kept, a slow socket costs
   * batches rather than calls.
   */
  private push(frame: ChatFrame, target: DeliveryTarget): void {
    for (const connectionId of this.subs()) {
      const queued = this.outboxes.get(connectionId);
      if (queued) {
        queued.push(frame);
        continue;
      }
      const outbox = [frame];
      this.outboxes.set(connectionId, outbox);
      this.ctx.waitUntil(this.pump(connectionId, outbox, target));
    }
  }

  private async pump(connectionId: string, outbox: ChatFrame[], target: DeliveryTarget): Promise<void> {
    try {
      while (outbox.length) {
        const frames = outbox.splice(0);
        const result = await connectionHost(this.env, connectionId).deliver(target, frames);
        if (result === "gone") {
          this.unsubscribe(connectionId);
          break;
        }
      }
    } catch (err) {
      // Real time is best effort: the messages are stored; the socket may read them with GET.
      console.error(JSON.stringify({ error: "socket delivery failed", connectionId, cause: String(err) }));
    } finally {
      this.outboxes.delete(connectionId);
    }
  }

  // ---- socket host role -------------------------------------------------------------------

  /** When this socket's key was last found valid (memory only: a woken object checks again). */
  private keyCheckedAt = 0;
  /** The key was found revoked or expired (or its user lost the role): the socket is closed. */
  private keyRejected = false;

  /**
   * The socket's key is checked again before it is used, at most once per KEY_CACHE_TTL_MS: the
   * bound within which a revoked key stops working on requests too. The opening request checked it
   * once, but a socket lives for hours; without this a revoked key (or a removed ADMIN's user key)
   * would keep receiving the team's chats and events. A key no longer valid closes the socket.
   */
  private async keyValid(ws: WebSocket, meta: SocketMeta): Promise<boolean> {
    if (this.keyRejected) return false;
    const now = Date.now();
    if (now - this.keyCheckedAt < KEY_CACHE_TTL_MS) return true;
    if (await keyStillAuthorized(createDb(this.env.DB), meta, meta.teamId)) {
      this.keyCheckedAt = now;
      return true;
    }
    this.keyRejected = true;
    await this.cleanUp(ws);
    ws.serializeAttachment({ ...meta, chats: [], events: [] } satisfies SocketMeta);
    try {
      ws.close(1008, "The key of this socket was revoked or expired, or lost its role in the team.");
    } catch {
      // Already closing.
    }
    return false;
  }

  /** Accepts the WebSocket the Worker forwards (only the Worker can reach this object). */
  override async fetch(request: Request): Promise<Response> {
    const raw = request.headers.get(SOCKET_META_HEADER);
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket" || !raw) {
      return new Response("expected a WebSocket upgrade", { status: 426 });
    }
    const meta = JSON.parse(raw) as SocketMeta;
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server);
    server.serializeAttachment(meta);
    server.send(encodeFrame({ type: "connection", connectionId: meta.connectionId } satisfies ServerFrame));
    for (const chatId of meta.chats) server.send(encodeFrame({ type: "subscribed", chatId } satisfies ServerFrame));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Whether this socket's key could read a chat of this team and end user (checked before creating one). */
  async admits(target: { teamId: string; chatUserId: string | null }): Promise<boolean> {
    const ws = this.socket();
    if (!ws) return false;
    const meta = ws.deserializeAttachment() as SocketMeta;
    if (!canReadChat(meta, { teamId: target.teamId, userId: target.chatUserId })) return false;
    return this.keyValid(ws, meta);
  }

  /** A POST named this socket's connectionId: follow the chat if the socket's key may read it. */
  async attachChat(target: DeliveryTarget): Promise<boolean> {
    const ws = this.socket();
    if (!ws) return false;
    if (!(await this.keyValid(ws, ws.deserializeAttachment() as SocketMeta))) return false;
    const meta = ws.deserializeAttachment() as SocketMeta;
    if (!canReadChat(meta, { teamId: target.teamId, userId: target.chatUserId })) return false;
    if (!meta.chats.includes(target.chatId)) {
      if (meta.chats.length >= MAX_CHATS_PER_SOCKET) return false;
      meta.chats.push(target.chatId);
      ws.serializeAttachment(meta);
      ws.send(encodeFrame({ type: "subscribed", chatId: target.chatId } satisfies ServerFrame));
    }
    return true;
  }

  /**
   * Frames of one chat for this socket. "gone" tells the chat to drop the subscription: the
   * socket closed, unsubscribed, or may no longer read the chat (checked again on every delivery).
   */
  async deliver(target: DeliveryTarget, frames: ChatFrame[]): Promise<"delivered" | "gone"> {
    const ws = this.socket();
    if (!ws) return "gone";
    if (!(await this.keyValid(ws, ws.deserializeAttachment() as SocketMeta))) return "gone";
    const meta = ws.deserializeAttachment() as SocketMeta;
    if (!meta.chats.includes(target.chatId)) return "gone";
    if (!canReadChat(meta, { teamId: target.teamId, userId: target.chatUserId })) {
      this.dropChat(ws, meta, target.chatId);
      return "gone";
    }
    try {
      for (const frame of frames) {
        if (frame.chatId !== target.chatId) continue;
        ws.send(encodeFrame(frame));
        if (frame.type === "chat_deleted") this.dropChat(ws, meta, target.chatId);
      }
    } catch {
      return "gone";
    }
    return "delivered";
  }

  /** A platform event for this socket if it asked for the type (and belongs to the team). */
  async deliverEvent(event: PlatformEvent): Promise<"delivered" | "gone"> {
    const ws = this.socket();
    if (!ws) return "gone";
    if (!(await this.keyValid(ws, ws.deserializeAttachment() as SocketMeta))) return "gone";
    const meta = ws.deserializeAttachment() as SocketMeta;
    if (meta.teamId !== event.teamId || meta.keyType === "publishable") return "gone";
    if (!meta.events.includes("*") && !meta.events.includes(event.type)) return "gone";
    try {
      ws.send(encodeFrame({ type: "event", event } satisfies ServerFrame));
    } catch {
      return "gone";
    }
    return "delivered";
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const reply = (frame: ServerFrame) => ws.send(encodeFrame(frame));
    const refuse = (status: number, text: string, chatId?: string) =>
      reply({ type: "error", ...(chatId ? { chatId } : {}), status, error: STATUS_NAMES[status] ?? "Error", message: text });

    let parsed: ClientFrame;
    try {
      const result = ClientFrame.safeParse(JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message)));
      if (!result.success) {
        return refuse(400, `Invalid frame: ${result.error.issues.map((i) => `${i.path.join(".") || "frame"}: ${i.message}`).join("; ")}`);
      }
      parsed = result.data;
    } catch {
      return refuse(400, 'Frames are JSON objects with a "type": subscribe, unsubscribe, subscribe_events or ping.');
    }

    const meta = ws.deserializeAttachment() as SocketMeta;
    if (!(await this.keyValid(ws, meta))) return;
    switch (parsed.type) {
      case "ping":
        return reply({ type: "pong" });
      case "subscribe": {
        const { chatId } = parsed;
        const chat = await findChat(createDb(this.env.DB), meta.teamId, chatId);
        if (!chat || !canReadChat(meta, chat)) return refuse(404, "Chat not found.", chatId);
        const current = ws.deserializeAttachment() as SocketMeta;
        if (!current.chats.includes(chatId)) {
          if (current.chats.length >= MAX_CHATS_PER_SOCKET) {
            return refuse(400, `A socket follows at most ${MAX_CHATS_PER_SOCKET} chats; unsubscribe from one first.`, chatId);
          }
          current.chats.push(chatId);
          ws.serializeAttachment(current);
        }
        if (!(await chatSession(this.env, chatId).subscribe(current.connectionId))) {
          this.dropChat(ws, ws.deserializeAttachment() as SocketMeta, chatId);
          return refuse(409, "This chat has too many sockets following it.", chatId);
        }
        return reply({ type: "subscribed", chatId });
      }
      case "unsubscribe": {
        const { chatId } = parsed;
        this.dropChat(ws, meta, chatId);
        await chatSession(this.env, chatId).unsubscribe(meta.connectionId);
        return reply({ type: "unsubscribed", chatId });
      }
      case "subscribe_events": {
        if (meta.keyType === "publishable") {
          return refuse(403, "Publishable keys cannot follow platform events; open the socket with a secret key.");
        }
        const events = [...new Set(parsed.events)];
        await subscribeSocketEvents(createDb(this.env.DB), meta.teamId, meta.connectionId, events);
        const current = ws.deserializeAttachment() as SocketMeta;
        current.events = events;
        ws.serializeAttachment(current);
        return reply({ type: "events_subscribed", events });
      }
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    await this.cleanUp(ws);
    try {
      ws.close(code, reason);
    } catch {
      // Already closed (the runtime answers the close handshake itself).
    }
  }

  override async webSocketError(ws: WebSocket): Promise<void> {
    await this.cleanUp(ws);
  }

  private socket(): WebSocket | undefined {
    return this.ctx.getWebSockets()[0];
  }

  private dropChat(ws: WebSocket, meta: SocketMeta, chatId: string): void {
    if (!meta.chats.includes(chatId)) return;
    meta.chats = meta.chats.filter((c) => c !== chatId);
    ws.serializeAttachment(meta);
  }

  /** Best effort: a chat that is not told learns it on its next delivery ("gone"). */
  private async cleanUp(ws: WebSocket): Promise<void> {
    const meta = ws.deserializeAttachment() as SocketMeta | null;
    if (!meta) return;
    const tasks: Promise<unknown>[] = meta.chats.map((chatId) => chatSession(this.env, chatId).unsubscribe(meta.connectionId));
    if (meta.events.length) tasks.push(forgetSocketEvents(createDb(this.env.DB), meta.connectionId));
    await Promise.allSettled(tasks);
  }
}
