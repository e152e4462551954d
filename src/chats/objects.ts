/** The ChatSession object of a chat (one per chat, named by the chat id). */
export function chatSession(env: Env, chatId: string) {
  return env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(chatId));
}

/** The ChatSession object hosting one WebSocket, named by its connectionId ("conn_..."). */
export function connectionHost(env: Env, connectionId: string) {
  return env.CHAT_SESSION.get(env.CHAT_SESSION.idFromName(connectionId));
}

/** connectionIds are ours: anything else is refused before an object is addressed by it. */
export function isConnectionId(value: string): boolean {
  return /^conn_[A-Za-z0-9]{1,64}$/.test(value);
}
