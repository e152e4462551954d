/**
 * The endpoints a publishable key (pk_live_) may call: SPEC.md, Authentication 4.
 * This table is the single source for the gate in the auth middleware and for the
 * `allowedEndpoints` list of the 403 body.
 */
export const PUBLISHABLE_ENDPOINTS = [
  { method: "POST", path: "/chat", label: "Create a chat session" },
  { method: "GET", path: "/chat/:chatId", label: "Get a chat session with its messages" },
  { method: "POST", path: "/chat/:chatId/message", label: "Send a message and get the agent's answer" },
  { method: "GET", path: "/chat/:chatId/message", label: "List the messages of a chat" },
] as const;

/** The real-time channel a browser needs beside them (chat issue): not listed in the 403 body. */
const PUBLISHABLE_REALTIME = [
  { method: "GET", path: "/ws" },
  { method: "GET", path: "/chat/:chatId/ws" },
] as const;

const PUBLISHABLE_PATTERNS = [...PUBLISHABLE_ENDPOINTS, ...PUBLISHABLE_REALTIME].map(({ method, path }) => ({
  method,
  regex: new RegExp(`^${path.replace(/:[A-Za-z]+/g, "[^/]+")}/?$`),
}));

export function isPublishableEndpoint(method: string, path: string): boolean {
  return PUBLISHABLE_PATTERNS.some((e) => e.method === method && e.regex.test(path));
}

export function publishableForbiddenBody() {
  return {
    error: "Forbidden",
    message:
      "This endpoint requires a secret key (sk_live_). Publishable keys (pk_live_) can only reach the chat and message endpoints.",
    allowedEndpoints: PUBLISHABLE_ENDPOINTS.map((e) => `${e.method} ${e.path} - ${e.label}`),
    upgradeInstructions:
      "Call this endpoint from your server with a team secret key (sk_live_...) or a user secret key (usk_live_...) under /team/{teamId}/. Never put secret keys in client-side code.",
  };
}
