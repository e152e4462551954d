import { pushEventToSockets } from "../chats/realtime";
import type { PlatformEvent } from "./emit";

/**
 * Real-time push of a committed event to the team's open WebSocket connections that asked for it.
 * Called by the events queue consumer (src/events/consumer.ts) once per event, before webhooks.
 *
 * Sockets ask for event types with the frame {"type":"subscribe_events","events":[...]} (secret and
 * user keys only); src/chats/realtime.ts delivers to them. Chat frames (messages, deltas, routing)
 * do not take this path: the chat's ChatSession pushes them as they happen. Push is best effort: the consumer logs a failure here and
 * still delivers the webhooks, so a socket problem never delays or duplicates webhook deliveries.
 */
export async function deliverToSockets(env: Env, event: PlatformEvent): Promise<void> {
  await pushEventToSockets(env, event);
}
