// Chat: POST /chat/{chatId}/message answered by the embedded local model.
// - throughput and latency on ONE chat (its ChatSession answers one message after another, so
//   concurrent requests queue) and spread over 50 chats (objects work in parallel);
// - the platform's own cost per message: client latency minus the model time the Worker reports in
//   Server-Timing (route + model), one request at a time over the 50 chats;
// - real time: 20 WebSockets follow one chat (GET /chat/{chatId}/ws); time from sending the POST to
//   the final assistant frame on the last of the 20 sockets (Node 22's global WebSocket).
import { summarize } from "../lib/stats.mjs";

const CHATS = 50;
const SOCKETS = 20;
const OVERHEAD_SAMPLES = Number(process.env.BENCH_CHAT_SAMPLES ?? 300);
const FANOUT_TURNS = Number(process.env.BENCH_CHAT_FANOUT_TURNS ?? 100);
const QUESTIONS = [
  "How do I reset my password?",
  "What are your opening hours?",
  "Can I change the email address of my account?",
  "Hello!",
  "Does the product work offline?",
];

function result(name, samples, seconds, errors = 0) {
  return { name, requests: samples.length, errors, seconds, rps: samples.length / seconds, ...summarize(samples) };
}

/** Server-Timing "name;dur=ms, ..." as { name: ms }. */
function timings(header) {
  return Object.fromEntries([...(header ?? "").matchAll(/([\w-]+);dur=([\d.]+)/g)].map((m) => [m[1], Number(m[2])]));
}

function openSocket(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const listeners = new Set();
    ws.addEventListener("message", (e) => {
      const frame = JSON.parse(String(e.data));
      for (const l of listeners) l(frame);
    });
    ws.addEventListener("error", () => reject(new Error(`WebSocket ${url} failed`)));
    // A closed socket (e.g. wrangler dev reloading after a source change) must fail the run loudly:
    // with nothing else pending, Node would otherwise just exit.
    ws.addEventListener("close", (e) => {
      const error = new Error(`WebSocket closed by the server (code ${e.code})`);
      reject(error);
      for (const l of listeners) l({ type: "__closed", error });
    });
    const onFirst = (frame) => {
      if (frame.type !== "subscribed") return;
      listeners.delete(onFirst);
      resolve({ ws, listeners });
    };
    listeners.add(onFirst);
  });
}

/** @type {import("../lib/scenario.mjs").Scenario} */
export default {
  name: "chat",
  description: `POST /chat/{chatId}/message (local model): 1 chat vs ${CHATS} chats, platform overhead, ${SOCKETS}-socket fan-out`,
  async run({ baseUrl, keys, api, compare, ratio, settings }) {
    const key = keys.secretKey;
    const agent = await api("/agent", {
      method: "POST",
      key,
      body: {
        name: "Bench helper",
        description: "Answers account and product questions.",
        systemPrompt: "You are a concise support assistant.",
        notes: "Passwords are reset from the sign-in page. Opening hours are 9:00 to 17:00, Monday to Friday.",
      },
    });
    const chats = [];
    for (let i = 0; i < CHATS; i++) chats.push(await api("/chat", { method: "POST", key, body: { agentId: agent.id } }));
    const init = (i) => ({
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ content: QUESTIONS[i % QUESTIONS.length], role: "user" }),
    });

    // 1) Throughput: one chat vs fifty (round robin; `url` is read once per request).
    let turn = 0;
    const oneChat = { name: "POST message, 1 chat", url: `${baseUrl}/chat/${chats[0].id}/message`, init: init(0) };
    const manyChats = {
      name: `POST message, ${CHATS} chats`,
      get url() {
        return `${baseUrl}/chat/${chats[turn++ % CHATS].id}/message`;
      },
      init: init(1),
    };
    const readChat = { name: "GET /chat/{chatId} (read)", url: `${baseUrl}/chat/${chats[1].id}`, init: { headers: { "x-api-key": key } } };
    const [one, many, read] = await compare([oneChat, manyChats, readChat], settings);

    // 2) Platform overhead: one request at a time, latency minus the model time the Worker reports;
    //    an authenticated single read (GET /chat/{chatId}) interleaved as the reference.
    const latencies = [];
    const models = [];
    const overheads = [];
    const reads = [];
    const loads = [];
    const stores = [];
    let errors = 0;
    const started = performance.now();
    for (let i = 0; i < OVERHEAD_SAMPLES; i++) {
      const r0 = performance.now();
      const read = await fetch(`${baseUrl}/chat/${chats[i % CHATS].id}`, { headers: { "x-api-key": key } });
      await read.arrayBuffer();
      if (read.status === 200) reads.push(performance.now() - r0);
      else errors++;

      const t0 = performance.now();
      const res = await fetch(`${baseUrl}/chat/${chats[i % CHATS].id}/message`, init(i));
      await res.arrayBuffer();
      const ms = performance.now() - t0;
      if (res.status !== 200) {
        errors++;
        continue;
      }
      const phases = timings(res.headers.get("server-timing"));
      const model = (phases.route ?? 0) + (phases.model ?? 0);
      latencies.push(ms);
      models.push(model);
      overheads.push(ms - model);
      loads.push(phases.load ?? 0);
      stores.push(phases.store ?? 0);
    }
    const seconds = (performance.now() - started) / 1000;
    const sequential = result("POST message, sequential", latencies, seconds, errors);
    const modelTime = result("  of which model (Server-Timing)", models, seconds);
    const overhead = result("  platform overhead per message", overheads, seconds);
    const readSequential = result("GET /chat/{chatId}, sequential", reads, seconds);
    const loadTime = result("  of which reading chat + agent", loads, seconds);
    const storeTime = result("  of which the two message writes", stores, seconds);

    // 3) Fan-out: 20 sockets follow one chat; POST -> final frame on the last socket.
    const fanChat = await api("/chat", { method: "POST", key, body: { agentId: agent.id } });
    const wsBase = baseUrl.replace(/^http/, "ws");
    const sockets = await Promise.all(
      Array.from({ length: SOCKETS }, () => openSocket(`${wsBase}/chat/${fanChat.id}/ws?apiKey=${encodeURIComponent(key)}`)),
    );
    const toLast = [];
    const httpTimes = [];
    const fanStart = performance.now();
    for (let i = 0; i < FANOUT_TURNS; i++) {
      const t0 = performance.now();
      const arrivals = sockets.map(
        ({ listeners }) =>
          new Promise((resolve, reject) => {
            const l = (frame) => {
              if (frame.type === "__closed") reject(frame.error);
              if (frame.type === "message" && frame.message.role === "assistant") {
                listeners.delete(l);
                resolve(performance.now() - t0);
              }
            };
            listeners.add(l);
          }),
      );
      const res = await fetch(`${baseUrl}/chat/${fanChat.id}/message`, init(i));
      await res.arrayBuffer();
      httpTimes.push(performance.now() - t0);
      toLast.push(Math.max(...(await Promise.all(arrivals))));
    }
    const fanSeconds = (performance.now() - fanStart) / 1000;
    for (const { ws } of sockets) ws.close();
    const fanHttp = result(`POST message, ${SOCKETS} sockets following`, httpTimes, fanSeconds);
    const fanOut = result(`  POST -> final frame on all ${SOCKETS} sockets`, toLast, fanSeconds);

    console.log(
      `   platform overhead per message (latency - model time), sequential: p50 ${overhead.p50.toFixed(2)} ms, ` +
        `p99 ${overhead.p99.toFixed(2)} ms (target p50 < 10 ms: ${overhead.p50 < 10 ? "met" : "NOT met"}); model p50 ${modelTime.p50.toFixed(2)} ms; ` +
        `an authenticated read (GET /chat/{chatId}) p50 ${readSequential.p50.toFixed(2)} ms`,
    );
    return {
      results: [one, many, read, sequential, modelTime, loadTime, storeTime, overhead, readSequential, fanHttp, fanOut],
      ratios: [
        ratio(`${CHATS} chats / 1 chat (messages/s)`, many, one),
        ratio("POST message / GET chat (req/s)", many, read),
      ],
    };
  },
};
