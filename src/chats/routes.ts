import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { EventSink } from "../events/emit";
import { teamIdOf } from "../http/auth";
import type { AppEnv } from "../http/context";
import { ApiError, badRequest, notFound } from "../http/errors";
import {
  commonErrors,
  conflictError,
  createRouter,
  ErrorSchema,
  jsonBody,
  jsonResponse,
  notFoundError,
  security,
} from "../http/openapi";
import { newId } from "../lib/ids";
import { canReadChat, USER_ID_HEADER, type ChatReader } from "./access";
import { SOCKET_META_HEADER, type SendInput, type SendOutcome, type SocketMeta } from "./chat-session";
import { sseChunk, type ChatFrame, type ServerFrame } from "./protocol";
import * as schemas from "./schemas";
import * as service from "./service";
import { chatSession, connectionHost } from "./objects";

const tags = ["Chat"];

const sinkOf = (c: Context<AppEnv>): EventSink => ({
  env: c.env,
  db: c.var.db,
  waitUntil: (p) => c.executionCtx.waitUntil(p),
});

/** The end-user id a request presents: header x-user-id, or ?userId= (WebSockets, links). */
function presentedUserId(c: Context<AppEnv>): string | null {
  return c.req.header(USER_ID_HEADER)?.trim() || c.req.query("userId")?.trim() || null;
}

function readerOf(c: Context<AppEnv>): ChatReader {
  return { teamId: teamIdOf(c), keyType: c.var.principal.keyType, userId: presentedUserId(c) };
}

/** The chat if this request may read it; 404 otherwise (another team's, or another end user's). */
async function readableChat(c: Context<AppEnv>, chatId: string) {
  const reader = readerOf(c);
  const chat = await service.findChat(c.var.db, reader.teamId, chatId);
  if (!chat || !canReadChat(reader, chat)) throw notFound("Chat");
  return chat;
}

function outcomeError(outcome: Extract<SendOutcome, { ok: false }>, chatId: string): ApiError {
  const extra: Record<string, unknown> = { chatId };
  if (outcome.userMessageId) extra.userMessageId = outcome.userMessageId;
  return new ApiError(outcome.status, outcome.message, extra);
}

const noConnection = () =>
  badRequest(
    "connectionId does not name an open WebSocket connection that may read this chat. Open GET /ws and use the connectionId of its first frame.",
    { fields: [{ field: "connectionId", message: "no such open connection for this key" }] },
  );

/** Runs one turn through the chat's ChatSession and answers with JSON. */
async function sendJson(c: Context<AppEnv>, input: SendInput) {
  const pending = chatSession(c.env, input.chatId).send(input);
  // The turn completes (and is stored) even if the client goes away.
  c.executionCtx.waitUntil(pending.catch(() => undefined));
  const outcome = await pending;
  if (!outcome.ok) throw outcomeError(outcome, input.chatId);
  // Where the turn's time went; the bench subtracts route + model to get the platform's own cost.
  c.header(
    "Server-Timing",
    Object.entries(outcome.timing)
      .map(([phase, ms]) => `${phase.replace(/Ms$/, "")};dur=${ms.toFixed(2)}`)
      .join(", "),
  );
  return outcome;
}

const encoder = new TextEncoder();

/**
 * The same turn as server-sent events. The HTTP status is decided by the first thing the chat
 * reports: a refusal before anything was stored (404, 409, ...) is a normal JSON error; once the
 * user message is stored the stream starts (200) and a later failure arrives as an error event.
 */
async function sendEventStream(c: Context<AppEnv>, input: SendInput): Promise<Response> {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  const writer = writable.getWriter();
  const write = (frame: ServerFrame) => {
    writer.write(encoder.encode(sseChunk(frame))).catch(() => undefined);
  };
  let streaming = false;
  const early: ChatFrame[] = [];
  let firstFrame!: () => void;
  const started = new Promise<"frame">((resolve) => (firstFrame = () => resolve("frame")));
  const listener = (frame: ChatFrame) => {
    if (streaming) return write(frame);
    early.push(frame);
    firstFrame();
  };

  const pending = chatSession(c.env, input.chatId).send(input, listener);
  c.executionCtx.waitUntil(pending.catch(() => undefined));
  await Promise.race([started, pending]);
  streaming = true;
  if (!early.length) {
    // Nothing streamed: a refusal, or a retried message answered from storage.
    const outcome = await pending;
    if (!outcome.ok) throw outcomeError(outcome, input.chatId);
    write({ type: "message", chatId: input.chatId, message: outcome.user });
    write({ type: "message", chatId: input.chatId, message: outcome.assistant });
    writer.close().catch(() => undefined);
  } else {
    for (const frame of early) write(frame);
    pending
      .catch(() => {
        const message = "The message could not be processed. Retry it.";
        write({ type: "error", chatId: input.chatId, status: 500, error: "Internal Server Error", message });
      })
      .finally(() => writer.close().catch(() => undefined));
  }
  return c.body(readable, 200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "x-accel-buffering": "no",
  });
}

function wantsEventStream(c: Context<AppEnv>): boolean {
  return (c.req.header("accept") ?? "").includes("text/event-stream");
}

/** Opens a WebSocket hosted by its own ChatSession object (named by the new connectionId). */
async function openSocket(c: Context<AppEnv>, chats: string[]): Promise<Response> {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") {
    throw new ApiError(426, "This endpoint opens a WebSocket: send Upgrade: websocket.", { error: "Upgrade Required" });
  }
  const connectionId = newId("conn");
  const { keyId, userId: keyUserId } = c.var.principal;
  // The key goes with the socket so that its host can check it again later (revocation, role loss).
  const meta: SocketMeta = { ...readerOf(c), keyId, keyUserId, connectionId, chats, events: [] };
  const response = await connectionHost(c.env, connectionId).fetch("https://chat-session/connect", {
    headers: { upgrade: "websocket", [SOCKET_META_HEADER]: JSON.stringify(meta) },
  });
  await Promise.all(chats.map((chatId) => chatSession(c.env, chatId).subscribe(connectionId)));
  return response;
}

const socketResponses = {
  101: { description: "Switching Protocols: the WebSocket. Its first frame is {type: \"connection\", connectionId}." },
  426: { description: "Not a WebSocket upgrade request", content: { "application/json": { schema: ErrorSchema } } },
};

/**
 * Team-scoped (app.ts teamScopedRouters): /chat... and /ws for team keys, /team/{teamId}/... for
 * user keys. Publishable keys reach the four SPEC.md chat endpoints and the two sockets
 * (src/http/access.ts); their reads are further limited to the end user they present.
 */
export const chatRoutes = createRouter()
  .openapi(
    createRoute({
      method: "post",
      path: "/chat",
      tags,
      security,
      summary: "Open a chat with an agent; with prompt, also answer the first message (team's default agent unless agentId)",
      request: { headers: schemas.EndUserHeaders, query: schemas.EndUserQuery, body: jsonBody(schemas.CreateChatInput) },
      responses: {
        200: jsonResponse(schemas.CreatedChat, "The chat (prompt form: with the user message and the answer)"),
        ...commonErrors,
        ...notFoundError,
        ...conflictError,
        502: { description: "The model provider failed (the chat and the user message are kept)", content: { "application/json": { schema: ErrorSchema } } },
        504: { description: "The model timed out (the chat and the user message are kept)", content: { "application/json": { schema: ErrorSchema } } },
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const teamId = teamIdOf(c);
      const userId = body.userId ?? presentedUserId(c);
      if (body.connectionId) {
        // Checked before anything is created, so a bad connectionId leaves no chat behind.
        const ok = await connectionHost(c.env, body.connectionId).admits({ teamId, chatUserId: userId });
        if (!ok) throw noConnection();
      }
      const agentId = body.agentId ?? (await service.defaultAgentId(c.var.db, teamId));
      const chat = await service.createChat(sinkOf(c), teamId, { agentId, userId, title: body.title, metadata: body.metadata });
      if (body.prompt === undefined) return c.json(chat, 200);
      const outcome = await sendJson(c, {
        chatId: chat.id,
        teamId,
        // The creator speaks for the chat's end user, whether it named it in the body or in x-user-id.
        reader: { ...readerOf(c), userId },
        content: body.prompt,
        clientId: body.id,
        connectionId: body.connectionId,
      });
      return c.json({ ...chat, messages: [outcome.user, outcome.assistant] }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/chat",
      tags,
      security,
      summary: "List the team's chats, newest first",
      request: { query: schemas.ChatListQuery },
      responses: { 200: jsonResponse(schemas.ChatList, "Chats, newest first"), ...commonErrors },
    }),
    async (c) => c.json(await service.listChats(c.var.db, teamIdOf(c), c.req.valid("query")), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/chat/{chatId}",
      tags,
      security,
      summary: "A chat with its messages in order",
      request: { params: schemas.ChatIdParam, headers: schemas.EndUserHeaders, query: schemas.EndUserQuery },
      responses: { 200: jsonResponse(schemas.ChatDetail, "The chat"), ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      const chat = await readableChat(c, c.req.valid("param").chatId);
      const messages = await service.listMessages(c.var.db, chat.teamId, chat.id);
      return c.json({ ...service.toChatView(chat), messages }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/chat/{chatId}",
      tags,
      security,
      summary: "Change a chat's userId, title or metadata (team-level keys)",
      request: { params: schemas.ChatIdParam, body: jsonBody(schemas.UpdateChatInput) },
      responses: { 200: jsonResponse(schemas.Chat, "The chat"), ...commonErrors, ...notFoundError },
    }),
    async (c) =>
      c.json(await service.updateChat(c.var.db, teamIdOf(c), c.req.valid("param").chatId, c.req.valid("json")), 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/chat/{chatId}",
      tags,
      security,
      summary: "Delete a chat and its messages",
      request: { params: schemas.ChatIdParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      const teamId = teamIdOf(c);
      const { chatId } = c.req.valid("param");
      if (!(await service.deleteChat(c.var.db, teamId, chatId))) throw notFound("Chat");
      await chatSession(c.env, chatId).forget(chatId, teamId);
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/chat/{chatId}/message",
      tags,
      security,
      summary: "Send a user message; the answer is the assistant message (Accept: text/event-stream streams it)",
      request: {
        params: schemas.ChatIdParam,
        headers: schemas.EndUserHeaders,
        query: schemas.EndUserQuery,
        body: jsonBody(schemas.SendMessageInput),
      },
      responses: {
        200: {
          description: "The assistant message; with Accept: text/event-stream, the frames of the turn as server-sent events",
          content: {
            "application/json": { schema: schemas.Message },
            "text/event-stream": { schema: z.string().openapi({ description: "event: <frame type>\\ndata: <frame JSON>" }) },
          },
        },
        ...commonErrors,
        ...notFoundError,
        ...conflictError,
        502: { description: "The model provider failed (the user message is kept)", content: { "application/json": { schema: ErrorSchema } } },
        504: { description: "The model timed out (the user message is kept)", content: { "application/json": { schema: ErrorSchema } } },
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const reader = readerOf(c);
      // The chat's ChatSession reads the chat anyway: it checks access there (404), saving a read here.
      const input: SendInput = {
        chatId: c.req.valid("param").chatId,
        teamId: reader.teamId,
        reader,
        content: (body.content ?? body.prompt) as string,
        clientId: body.id,
        connectionId: body.connectionId,
      };
      if (wantsEventStream(c)) return sendEventStream(c, input);
      return c.json((await sendJson(c, input)).assistant, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/chat/{chatId}/message",
      tags,
      security,
      summary: "The messages of a chat in order",
      request: { params: schemas.ChatIdParam, headers: schemas.EndUserHeaders, query: schemas.EndUserQuery },
      responses: { 200: jsonResponse(schemas.MessageList, "Messages, in the order the chat decided"), ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      const chat = await readableChat(c, c.req.valid("param").chatId);
      return c.json({ messages: await service.listMessages(c.var.db, chat.teamId, chat.id) }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/chat/{chatId}/ws",
      tags,
      security,
      summary: "WebSocket following one chat (key as x-api-key or ?apiKey=)",
      request: { params: schemas.ChatIdParam, query: schemas.SocketQuery },
      responses: { ...socketResponses, ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      const chat = await readableChat(c, c.req.valid("param").chatId);
      return openSocket(c, [chat.id]);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/ws",
      tags,
      security,
      summary: "Real-time WebSocket (key as x-api-key or ?apiKey=); first frame carries the connectionId",
      request: { query: schemas.SocketQuery },
      responses: { ...socketResponses, ...commonErrors },
    }),
    async (c) => openSocket(c, []),
  );
