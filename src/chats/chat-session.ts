import { DurableObject } from "cloudflare:workers";

/**
 * One instance per chat: orders its messages, runs the agent loop and hosts the chat's
 * WebSockets. Built by the chat issue.
 */
export class ChatSession extends DurableObject<Env> {}
