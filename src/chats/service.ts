import { and, asc, desc, eq, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { agents, chats, messages, teams, type AgentConfig, type AgentType } from "../db/schema";
import { commitWithEvents, type EventSink } from "../events/emit";
import { badRequest, conflict, notFound } from "../http/errors";
import { newId, nowIso } from "../lib/ids";
import type { MessageView } from "./protocol";

export type ChatRow = typeof chats.$inferSelect;
export type MessageRow = typeof messages.$inferSelect;

/** A chat as HTTP responses and chat.created events show it. */
export type ChatView = {
  id: string;
  agentId: string;
  teamId: string;
  userId: string | null;
  title: string | null;
  metadata: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
};

export function toChatView(row: ChatRow): ChatView {
  return {
    id: row.id,
    agentId: row.agentId,
    teamId: row.teamId,
    userId: row.userId,
    title: row.title,
    metadata: row.metadata,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export function toMessageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    chatId: row.chatId,
    content: row.content,
    role: row.role,
    createdAt: row.createdAt,
    agentId: row.agentId,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    citations: row.citations,
    clientId: row.clientId,
  };
}

// ---- chats ---------------------------------------------------------------------------------

export async function findChat(db: Database, teamId: string, chatId: string): Promise<ChatRow | undefined> {
  return db
    .select()
    .from(chats)
    .where(and(eq(chats.id, chatId), eq(chats.teamId, teamId)))
    .get();
}

/** The agent must be one of the team's (another team's agent is as unknown as a missing one). */
async function requireAgent(db: Database, teamId: string, agentId: string): Promise<void> {
  const row = await db
    .select({ id: agents.id })
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.teamId, teamId)))
    .get();
  if (!row) throw notFound("Agent");
}

/**
 * The agent a prompt-form POST /chat talks to: the team's metadata key `defaultAgentId` when it
 * names an agent of the team, else the oldest supervisor, else the oldest agent.
 */
export async function defaultAgentId(db: Database, teamId: string): Promise<string> {
  const [team, candidates] = await db.batch([
    db.select({ metadata: teams.metadata }).from(teams).where(eq(teams.id, teamId)),
    db
      .select({ id: agents.id, type: agents.type })
      .from(agents)
      .where(eq(agents.teamId, teamId))
      .orderBy(sql`CASE ${agents.type} WHEN 'supervisor' THEN 0 ELSE 1 END`, asc(agents.createdAt), asc(agents.id))
      .limit(1),
  ]);
  const configured = team[0]?.metadata.defaultAgentId;
  if (configured) {
    const row = await db
      .select({ id: agents.id })
      .from(agents)
      .where(and(eq(agents.id, configured), eq(agents.teamId, teamId)))
      .get();
    if (row) return row.id;
  }
  const first = candidates[0];
  if (!first) {
    throw conflict(
      "This team has no agent to answer the prompt. Create one with POST /agent, or pass agentId to POST /chat.",
    );
  }
  return first.id;
}

export type NewChat = {
  agentId: string;
  userId?: string | null;
  title?: string | null;
  metadata?: Record<string, unknown>;
};

/** The chat row and its chat.created event in one batch. */
export async function createChat(sink: EventSink, teamId: string, input: NewChat): Promise<ChatView> {
  await requireAgent(sink.db, teamId, input.agentId);
  const now = nowIso();
  const row: ChatRow = {
    id: newId("chat"),
    teamId,
    agentId: input.agentId,
    userId: input.userId ?? null,
    title: input.title ?? null,
    metadata: input.metadata ?? {},
    createdAt: now,
    updatedAt: now,
  };
  const view = toChatView(row);
  await commitWithEvents(sink, [sink.db.insert(chats).values(row)], [{ type: "chat.created", teamId, data: view }]);
  return view;
}

export type ChatFilters = { userId?: string; agentType?: AgentType; limit: number; offset: number };

/** Newest first. agentType joins the chat's agent: chats whose agent was deleted have no type. */
export async function listChats(db: Database, teamId: string, filters: ChatFilters) {
  const conditions = [eq(chats.teamId, teamId)];
  if (filters.userId !== undefined) conditions.push(eq(chats.userId, filters.userId));
  const base = db
    .select({ id: chats.id, agentId: chats.agentId, userId: chats.userId, title: chats.title, createdAt: chats.createdAt })
    .from(chats);
  const query = filters.agentType
    ? base
        .innerJoin(agents, and(eq(agents.id, chats.agentId), eq(agents.teamId, chats.teamId)))
        .where(and(...conditions, eq(agents.type, filters.agentType)))
    : base.where(and(...conditions));
  // rowid breaks ties of the same millisecond in insertion order.
  const rows = await query
    .orderBy(desc(chats.createdAt), sql`${chats}.rowid DESC`)
    .limit(filters.limit)
    .offset(filters.offset);
  return { chats: rows };
}

export type ChatPatch = { userId?: string | null; title?: string | null; metadata?: Record<string, unknown> };

export async function updateChat(db: Database, teamId: string, chatId: string, patch: ChatPatch): Promise<ChatView> {
  if (patch.userId === undefined && patch.title === undefined && patch.metadata === undefined) {
    throw badRequest("Invalid body: send at least one of userId, title, metadata.", {
      fields: [{ field: "body", message: "send at least one of userId, title, metadata" }],
    });
  }
  const rows = await db
    .update(chats)
    .set({ ...patch, updatedAt: nowIso() })
    .where(and(eq(chats.id, chatId), eq(chats.teamId, teamId)))
    .returning();
  const row = rows[0];
  if (!row) throw notFound("Chat");
  return toChatView(row);
}

/** Removes the chat and (cascade) its messages; true when it existed. */
export async function deleteChat(db: Database, teamId: string, chatId: string): Promise<boolean> {
  const rows = await db
    .delete(chats)
    .where(and(eq(chats.id, chatId), eq(chats.teamId, teamId)))
    .returning({ id: chats.id });
  return rows.length > 0;
}

/** All messages of a chat in the order its ChatSession decided. */
export async function listMessages(db: Database, teamId: string, chatId: string): Promise<MessageView[]> {
  const rows = await db
    .select()
    .from(messages)
    .where(and(eq(messages.chatId, chatId), eq(messages.teamId, teamId)))
    .orderBy(asc(messages.seq));
  return rows.map(toMessageView);
}

// ---- used by the ChatSession Durable Object ------------------------------------------------

export type AgentSnapshot = { id: string; teamId: string; type: AgentType; name: string; config: AgentConfig };

/** The chat and its agent as they are now; agent null when it was deleted. */
export async function loadChatWithAgent(
  db: Database,
  teamId: string,
  chatId: string,
): Promise<{ chat: ChatRow; agent: AgentSnapshot | null } | null> {
  const row = await db
    .select({ chat: chats, agent: { id: agents.id, teamId: agents.teamId, type: agents.type, name: agents.name, config: agents.config } })
    .from(chats)
    .leftJoin(agents, and(eq(agents.id, chats.agentId), eq(agents.teamId, chats.teamId)))
    .where(and(eq(chats.id, chatId), eq(chats.teamId, teamId)))
    .get();
  if (!row) return null;
  return { chat: row.chat, agent: row.agent };
}

/** A supervisor's sub-agents that still exist as specialists of the team, in configured order. */
/** The newest `limit` messages, oldest first. */
export async function recentMessages(db: Database, chatId: string, limit: number): Promise<MessageRow[]> {
  const rows = await db
    .select()
    .from(messages)
    .where(eq(messages.chatId, chatId))
    .orderBy(desc(messages.seq))
    .limit(limit);
  return rows.reverse();
}

export async function findByClientId(db: Database, chatId: string, clientId: string): Promise<MessageRow | undefined> {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.chatId, chatId), eq(messages.clientId, clientId)))
    .get();
}

/** The message right after `seq`, when it is an assistant message (the answer to a user message). */
export async function answerTo(db: Database, chatId: string, seq: number): Promise<MessageRow | undefined> {
  return db
    .select()
    .from(messages)
    .where(and(eq(messages.chatId, chatId), eq(messages.seq, seq + 1), eq(messages.role, "assistant")))
    .get();
}

/** One message row and its message.created event in one batch. */
export async function insertMessage(sink: EventSink, row: MessageRow): Promise<void> {
  await commitWithEvents(
    sink,
    [sink.db.insert(messages).values(row)],
    [{ type: "message.created", teamId: row.teamId, data: toMessageView(row) }],
  );
}
