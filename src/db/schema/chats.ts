import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, teams } from "./teams";

export const MESSAGE_ROLES = ["user", "assistant"] as const;
export type MessageRole = (typeof MESSAGE_ROLES)[number];

/** A passage an assistant answer drew on (AgentKnowledgeTool), stored with the message. */
export type StoredCitation = { fileId: string; filename: string; passage: string };

/**
 * Chat sessions. agent_id deliberately has no foreign key: deleting an agent leaves its chats
 * readable (posting to them answers 409). Deleting a team removes its chats.
 */
export const chats = sqliteTable(
  "chats",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    agentId: text("agent_id").notNull(),
    /** End-user identifier; a publishable key must present the same value to reach the chat. */
    userId: text("user_id"),
    title: text("title"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    index("chats_team_created_idx").on(t.teamId, t.createdAt),
    index("chats_team_user_idx").on(t.teamId, t.userId, t.createdAt),
  ],
);

/**
 * Messages in the order their chat's ChatSession Durable Object decided (seq, dense per chat).
 * A user message and its answer have consecutive seq values; a user message whose answer failed
 * has none. client_id is the optional id a client sent so a retried POST is not stored twice.
 */
export const messages = sqliteTable(
  "messages",
  {
    id: text("id").primaryKey(),
    chatId: text("chat_id")
      .notNull()
      .references(() => chats.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    seq: integer("seq").notNull(),
    role: text("role", { enum: MESSAGE_ROLES }).notNull(),
    content: text("content").notNull(),
    /** Assistant messages: the agent that answered (in a supervisor chat, the chosen sub-agent). */
    agentId: text("agent_id"),
    inputTokens: integer("input_tokens"),
    outputTokens: integer("output_tokens"),
    citations: text("citations", { mode: "json" }).$type<StoredCitation[]>().notNull().default([]),
    clientId: text("client_id"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("messages_chat_seq_unique").on(t.chatId, t.seq),
    // SQLite treats NULLs as distinct, so only messages that carry a client id are constrained.
    uniqueIndex("messages_chat_client_unique").on(t.chatId, t.clientId),
    index("messages_team_idx").on(t.teamId),
  ],
);

/**
 * WebSocket connections (secret or user keys) that asked for the team's platform events
 * ({"type":"subscribe_events"}); read by the events consumer's socket hook. A row lives as long
 * as its socket: removed on close or when a push finds the socket gone.
 */
export const socketEventSubscriptions = sqliteTable(
  "socket_event_subscriptions",
  {
    connectionId: text("connection_id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    /** Event types, or ["*"] for all. */
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("socket_event_subscriptions_team_idx").on(t.teamId)],
);
