import { z } from "zod";
import { EVENT_TYPES, type PlatformEvent } from "../events/emit";

/**
 * The real-time protocol: every frame the service sends on a WebSocket (GET /ws,
 * GET /chat/:chatId/ws) and as a server-sent event (POST /chat/:chatId/message with
 * Accept: text/event-stream). Defined once here; every frame built elsewhere is checked with
 * `satisfies ServerFrame`. Documented in the README (section chat).
 */

export type CitationView = { fileId: string; filename: string; passage: string };

/** A message as HTTP responses, webhooks and frames show it. */
export type MessageView = {
  id: string;
  chatId: string;
  content: string;
  role: "user" | "assistant";
  createdAt: string;
  /** Assistant messages: the agent that answered (a supervisor's chosen sub-agent). Null for user messages. */
  agentId: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  citations: CitationView[];
  /** The id the client sent with its user message (retry protection), else null. */
  clientId: string | null;
};

/** Server -> client. `type` is the discriminant (and the SSE `event:` name). */
export type ServerFrame =
  /** First frame on every socket: pass connectionId in POST /chat or POST /chat/:chatId/message. */
  | { type: "connection"; connectionId: string }
  | { type: "subscribed"; chatId: string }
  | { type: "unsubscribed"; chatId: string }
  /** A stored message: the user message as soon as it is stored, the assistant message when complete. */
  | { type: "message"; chatId: string; message: MessageView }
  /** Supervisor chats: which sub-agent will answer the user message `messageId`. */
  | { type: "routing"; chatId: string; messageId: string; agentId: string; agentName: string; reason: string; fallback: boolean }
  /** A piece of the assistant's answer as it is generated; `messageId` is the id the final message will have. */
  | { type: "delta"; chatId: string; messageId: string; agentId: string; delta: string }
  /** A failed turn (status as the HTTP response would have it) or a refused client frame. */
  | { type: "error"; chatId?: string; messageId?: string; status: number; error: string; message: string }
  | { type: "chat_deleted"; chatId: string }
  | { type: "events_subscribed"; events: string[] }
  /** A platform event (agent.updated, ...) the socket asked for with subscribe_events. */
  | { type: "event"; event: PlatformEvent }
  | { type: "pong" };

export type ServerFrameType = ServerFrame["type"];

/** Frames a chat produces for its subscribers (and the SSE stream of one POST). */
export type ChatFrame = Extract<ServerFrame, { type: "message" | "routing" | "delta" | "error" | "chat_deleted" }>;

const ChatIdField = z.string().min(1).max(100);

/** Client -> server frames, validated on arrival. */
export const ClientFrame = z.discriminatedUnion("type", [
  z.object({ type: z.literal("subscribe"), chatId: ChatIdField }),
  z.object({ type: z.literal("unsubscribe"), chatId: ChatIdField }),
  /** Secret and user keys only: platform events of the team ("*" for all). */
  z.object({
    type: z.literal("subscribe_events"),
    events: z.array(z.enum([...EVENT_TYPES, "*"])).min(1).max(EVENT_TYPES.length + 1),
  }),
  z.object({ type: z.literal("ping") }),
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

export function encodeFrame(frame: ServerFrame): string {
  return JSON.stringify(frame);
}

/** The same frame as a server-sent event. */
export function sseChunk(frame: ServerFrame): string {
  return `event: ${frame.type}\ndata: ${JSON.stringify(frame)}\n\n`;
}
