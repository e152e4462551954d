import type { KeyType } from "../db/schema";

/** Who reads a chat: a request's key, or the key a WebSocket was opened with. */
export type ChatReader = {
  teamId: string;
  keyType: KeyType;
  /** The end-user id a publishable key presented (x-user-id header or userId query), else null. */
  userId: string | null;
};

/**
 * The one read rule for chats, for HTTP and sockets alike: same team; a publishable key reaches a
 * chat made with a userId only when it presents that userId. Secret and user keys see every chat
 * of their team. Callers answer 404 when this is false, so ids cannot be probed.
 */
export function canReadChat(reader: ChatReader, chat: { teamId: string; userId: string | null }): boolean {
  if (reader.teamId !== chat.teamId) return false;
  if (reader.keyType !== "publishable" || chat.userId === null) return true;
  return reader.userId === chat.userId;
}

/** The end-user id header a publishable key presents (the widget sends it; README, section chat). */
export const USER_ID_HEADER = "x-user-id";
