import { createApp } from "./app";
import { handleQueue } from "./queues";

export { RateLimiter } from "./ratelimit/rate-limiter";
export { ChatSession } from "./chats/chat-session";

const app = createApp();

export default {
  fetch: app.fetch,
  queue: handleQueue,
} satisfies ExportedHandler<Env>;
