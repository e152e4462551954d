import { z } from "@hono/zod-openapi";
import { AGENT_TYPES } from "../db/schema";
import { clientKeyed } from "../http/validation";

/** Field limits of chats and messages (README, section chat). */
export const LIMITS = {
  content: 32_000,
  userId: 200,
  title: 200,
  metadataBytes: 8_192,
  clientId: 100,
  listDefault: 100,
  listMax: 500,
} as const;

const Id = z.string().min(1).max(100);

const ConnectionId = z
  .string()
  .regex(/^conn_[A-Za-z0-9]{1,64}$/, 'a connectionId from the first frame of GET /ws ("conn_...")')
  .openapi({ description: "WebSocket connection that receives this chat's updates (first frame of GET /ws)" });

const UserId = z
  .string()
  .trim()
  .min(1)
  .max(LIMITS.userId)
  .openapi({ description: "End-user identifier. A publishable key reaches the chat only when it presents the same value." });

const Metadata = clientKeyed(
  z
    .record(z.string().max(100), z.unknown())
    .refine((m) => JSON.stringify(m).length <= LIMITS.metadataBytes, `at most ${LIMITS.metadataBytes} bytes of JSON`),
).openapi({ example: { source: "pricing-page" } });

const ClientMessageId = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,100}$/, "1-100 letters, digits or . _ : -")
  .openapi({
    description: "Your id for this user message: a repeated POST with the same id returns the stored answer instead of adding it twice",
  });

const Content = z.string().trim().min(1).max(LIMITS.content);

export const ChatIdParam = z.object({ chatId: Id.openapi({ param: { name: "chatId", in: "path" } }) });

export const CreateChatInput = z
  .object({
    agentId: Id.optional().openapi({ description: "Required unless prompt is given (then the team's default agent answers)" }),
    userId: UserId.optional(),
    metadata: Metadata.optional(),
    title: z.string().trim().max(LIMITS.title).optional(),
    prompt: Content.optional().openapi({ description: "Prompt form: open the chat and answer this first message" }),
    connectionId: ConnectionId.optional(),
    id: ClientMessageId.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.agentId === undefined && v.prompt === undefined) {
      ctx.addIssue({ code: "custom", path: ["agentId"], message: "agentId is required (or send prompt to use the team's default agent)" });
    }
    if (v.prompt === undefined && (v.connectionId !== undefined || v.id !== undefined)) {
      ctx.addIssue({ code: "custom", path: [v.id !== undefined ? "id" : "connectionId"], message: "only with prompt" });
    }
  })
  .openapi("CreateChatInput");

export const SendMessageInput = z
  .object({
    content: Content.optional().openapi({ description: "The message text (or send it as prompt)" }),
    role: z.literal("user").optional().openapi({ description: 'Only "user": the service writes the assistant messages' }),
    prompt: Content.optional().openapi({ description: "Alternative name for content" }),
    id: ClientMessageId.optional(),
    connectionId: ConnectionId.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if ((v.content === undefined) === (v.prompt === undefined)) {
      ctx.addIssue({ code: "custom", path: ["content"], message: "send the message text as content (or as prompt), exactly one of them" });
    }
  })
  .openapi("SendMessageInput");

export const UpdateChatInput = z
  .object({
    userId: UserId.nullable().optional(),
    title: z.string().trim().max(LIMITS.title).nullable().optional(),
    metadata: Metadata.optional(),
  })
  .strict()
  .openapi("UpdateChatInput");

export const ChatListQuery = z.object({
  userId: z.string().max(LIMITS.userId).optional().openapi({ description: "Only chats of this end user" }),
  agentType: z.enum(AGENT_TYPES).optional().openapi({ description: "Only chats whose agent has this type (chats of deleted agents have none)" }),
  limit: z.coerce.number().int().min(1).max(LIMITS.listMax).default(LIMITS.listDefault),
  offset: z.coerce.number().int().min(0).default(0),
});

export const Citation = z.object({ fileId: z.string(), filename: z.string(), passage: z.string() }).openapi("Citation");

export const Message = z
  .object({
    id: z.string(),
    chatId: z.string(),
    content: z.string(),
    role: z.enum(["user", "assistant"]),
    createdAt: z.string(),
    agentId: z.string().nullable().openapi({ description: "Assistant messages: the agent that answered (a supervisor's chosen sub-agent)" }),
    inputTokens: z.number().int().nullable(),
    outputTokens: z.number().int().nullable(),
    citations: z.array(Citation),
    clientId: z.string().nullable(),
  })
  .openapi("Message");

export const MessageList = z.object({ messages: z.array(Message) }).openapi("MessageList");

export const Chat = z
  .object({
    id: z.string(),
    agentId: z.string(),
    teamId: z.string(),
    userId: z.string().nullable(),
    title: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Chat");

export const CreatedChat = Chat.extend({
  messages: z
    .array(Message)
    .optional()
    .openapi({ description: "Prompt form only: the user message and the agent's answer" }),
}).openapi("CreatedChat");

export const ChatDetail = Chat.extend({ messages: z.array(Message) }).openapi("ChatDetail");

export const ChatSummary = z
  .object({ id: z.string(), agentId: z.string(), userId: z.string().nullable(), title: z.string().nullable(), createdAt: z.string() })
  .openapi("ChatSummary");

export const ChatList = z.object({ chats: z.array(ChatSummary) }).openapi("ChatList");

/** Publishable keys: the end user whose chats the request may reach (the widget sends it). */
export const EndUserHeaders = z.object({
  "x-user-id": z
    .string()
    .max(LIMITS.userId)
    .optional()
    .openapi({ description: "Publishable keys: the end user (chats made with a userId need the same value; also accepted as ?userId=)" }),
});

/**
 * The end user as ?userId= (links, clients that cannot set headers): presentedUserId in routes.ts
 * reads it on every chat route, so it has the limit of x-user-id (and of a stored userId) there too.
 */
export const EndUserQuery = z.object({
  userId: z.string().max(LIMITS.userId).optional().openapi({ description: "Same as the x-user-id header" }),
});

export const SocketQuery = z.object({
  apiKey: z.string().optional().openapi({ description: "The key, for clients that cannot set headers (browsers)" }),
  userId: z.string().max(LIMITS.userId).optional().openapi({ description: "Publishable keys: the end user whose chats the socket may follow" }),
});
