// Webhooks: how fast committed events reach receivers. A Node HTTP receiver on 127.0.0.1 (one
// path per endpoint) verifies every signature with the README's verification code, drops
// duplicates by webhook-id and answers 200. Ten webhooks subscribe to message.created. Events come
// from the real chat API: two per POST /chat/{chatId}/message (the user's message and the answer).
// Per delivery, the delay runs from the event's createdAt (its commit) to its arrival here.
// - burst: BENCH_WEBHOOK_EVENTS (1000) events as fast as `concurrency` clients make them; the
//   throughput in events fully delivered (to all ten) per second, and the delay including backlog.
// - paced: a quarter as many at a steady rate below capacity: the delay of the pipeline itself.
// If the chat endpoints cannot answer, agent.updated events from PUT /agent/{id} stand in (and the
// table says so).
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { summarize } from "../lib/stats.mjs";

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1000);
const ENDPOINTS = 10;
const CHATS = 8;
const DEADLINE_MS = 300_000;
const PACE_MS = 100;

/** The receiver side of README "Verifying a delivery" (Node), verbatim. */
function verifyWebhook(secret, headers, rawBody, toleranceSeconds = 300) {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceSeconds) return false; // replayed or stale
  const key = secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${rawBody}`).digest();
  return signatures.split(" ").some((signature) => {
    const [version, value] = signature.split(",");
    const given = Buffer.from(value ?? "", "base64");
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

function startReceiver(secrets) {
  const seen = Array.from({ length: ENDPOINTS }, () => new Map()); // per endpoint: webhook-id -> { arrival, createdAt, type }
  const stats = { requests: 0, duplicates: 0, badSignatures: 0 };
  const server = createServer({ keepAlive: true }, (req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      try {
        receive();
      } catch (err) {
        stats.badSignatures++;
        res.writeHead(500).end(String(err));
      }
    });
    const receive = () => {
      const arrival = Date.now();
      stats.requests++;
      const index = Number(req.url?.split("/")[2]);
      const raw = Buffer.concat(chunks).toString("utf8");
      if (!seen[index] || !verifyWebhook(secrets[index] ?? "", req.headers, raw)) {
        stats.badSignatures++;
        res.writeHead(401).end("bad signature");
        return;
      }
      const id = req.headers["webhook-id"];
      if (seen[index].has(id)) stats.duplicates++;
      else {
        const event = JSON.parse(raw);
        seen[index].set(id, { arrival, createdAt: Date.parse(event.createdAt), type: event.type });
      }
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    };
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => resolve({ server, port: server.address().port, seen, stats }));
  });
}

/** Runs `total` calls of `task(i)` with `concurrency` in flight. */
async function pool(total, concurrency, task) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await task(next++);
    }),
  );
}

/** Makes `count` message.created events through the chat API; null when chat cannot answer here. */
async function chatSource(api, key) {
  let chats;
  try {
    const agent = await api("/agent", {
      method: "POST",
      key,
      body: { name: "Bench agent", description: "Answers briefly.", systemPrompt: "Answer in one sentence.", notes: "" },
    });
    chats = [];
    for (let i = 0; i < CHATS; i++) chats.push(await api("/chat", { method: "POST", key, body: { agentId: agent.id } }));
    await api(`/chat/${chats[0].id}/message`, { method: "POST", key, body: { content: "warm-up" } });
  } catch (err) {
    return { error: String(err.message ?? err).slice(0, 200) };
  }
  return {
    type: "message.created",
    perCall: 2, // the user's message and the answer
    label: "POST /chat/{chatId}/message",
    warmupEvents: 2,
    call: (i) => api(`/chat/${chats[i % CHATS].id}/message`, { method: "POST", key, body: { content: `Question ${i}` } }),
  };
}

async function agentSource(api, key) {
  const agents = [];
  for (let i = 0; i < CHATS; i++) {
    agents.push(
      await api("/agent", { method: "POST", key, body: { name: `Bench agent ${i}`, description: "", systemPrompt: "", notes: "" } }),
    );
  }
  return {
    type: "agent.updated",
    perCall: 1,
    label: "PUT /agent/{id}",
    warmupEvents: 0,
    call: (i) => api(`/agent/${agents[i % CHATS].id}`, { method: "PUT", key, body: { notes: `revision ${i}` } }),
  };
}

/** Waits until `expected` deliveries of events created at or after `since` have arrived. */
async function waitFor(receiver, source, expected, since) {
  const count = () =>
    receiver.seen.reduce((n, m) => n + [...m.values()].filter((d) => d.type === source.type && d.createdAt >= since).length, 0);
  const deadline = Date.now() + DEADLINE_MS;
  while (count() < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return count();
}

/** One measured run: `drive(calls, call)` makes the calls; then waits for every delivery. */
async function phase(receiver, source, calls, drive) {
  const stats0 = { ...receiver.stats };
  const started = Date.now();
  const latencies = [];
  let callErrors = 0;
  await drive(calls, async (i) => {
    const t0 = performance.now();
    try {
      await source.call(i);
      latencies.push(performance.now() - t0);
    } catch {
      callErrors++;
    }
  });
  const produced = Date.now();
  const expected = latencies.length * source.perCall * ENDPOINTS;
  const got = await waitFor(receiver, source, expected, started);
  const finished = Date.now();

  const perEvent = new Map();
  const deliveries = [];
  for (const m of receiver.seen) {
    for (const [id, d] of m) {
      if (d.type !== source.type || d.createdAt < started) continue;
      deliveries.push(d);
      const e = perEvent.get(id) ?? { count: 0, last: 0, createdAt: d.createdAt };
      e.count++;
      e.last = Math.max(e.last, d.arrival);
      perEvent.set(id, e);
    }
  }
  const complete = [...perEvent.values()].filter((e) => e.count === ENDPOINTS);
  const seconds = (finished - started) / 1000;
  const missing = Math.max(0, expected - got);
  const badSignatures = receiver.stats.badSignatures - stats0.badSignatures;
  const lastArrival = Math.max(...deliveries.map((d) => d.arrival));
  return {
    missing,
    badSignatures,
    duplicates: receiver.stats.duplicates - stats0.duplicates,
    callErrors,
    drainRate: deliveries.filter((d) => d.arrival > produced).length / Math.max(0.001, (lastArrival - produced) / 1000),
    producer: {
      requests: latencies.length,
      errors: callErrors,
      seconds: (produced - started) / 1000,
      rps: (latencies.length * source.perCall) / ((produced - started) / 1000),
      ...summarize(latencies),
    },
    // Duplicates are allowed by the contract (receivers drop them by webhook-id): reported, not errors.
    perDelivery: {
      requests: deliveries.length,
      errors: missing + badSignatures,
      seconds,
      rps: deliveries.length / seconds,
      ...summarize(deliveries.map((d) => d.arrival - d.createdAt)),
    },
    perEvent: {
      requests: complete.length,
      errors: perEvent.size - complete.length,
      seconds,
      rps: complete.length / seconds,
      ...summarize(complete.map((e) => e.last - e.createdAt)),
    },
  };
}

/** @type {import("../lib/scenario.mjs").Scenario} */
export default {
  name: "webhooks",
  description: `${EVENTS} events -> ${ENDPOINTS} webhooks on a local Node receiver: commit-to-2xx delay, events/s`,
  async run({ keys, api, settings }) {
    const key = keys.secretKey;
    // Endpoints first (secrets come back once), then the source, so that no event is missed.
    const secrets = [];
    const receiver = await startReceiver(secrets);
    const hooks = [];
    for (let i = 0; i < ENDPOINTS; i++) {
      const hook = await api("/team/webhook", {
        method: "POST",
        key,
        body: { name: `bench ${i}`, url: `http://127.0.0.1:${receiver.port}/hook/${i}`, events: ["message.created", "agent.updated"] },
      });
      secrets[i] = hook.secret;
      hooks.push(hook);
    }
    try {
      let source = await chatSource(api, key);
      if (source.error) {
        console.log(`   chat endpoints unavailable (${source.error}); using agent.updated from PUT /agent/{id}`);
        source = await agentSource(api, key);
      }
      await waitFor(receiver, source, source.warmupEvents * ENDPOINTS, 0);

      // 1. Burst: EVENTS events as fast as `concurrency` clients can make them.
      const burst = await phase(receiver, source, Math.ceil(EVENTS / source.perCall), (calls, call) =>
        pool(calls, settings.concurrency, call),
      );
      // 2. Paced: a quarter as many, one call every PACE_MS, a rate the pipeline sustains: the
      //    delay of the pipeline itself rather than of a backlog.
      const paced = await phase(receiver, source, Math.ceil(EVENTS / 4 / source.perCall), async (calls, call) => {
        const pending = [];
        for (let i = 0; i < calls; i++) {
          pending.push(call(i));
          await new Promise((r) => setTimeout(r, PACE_MS));
        }
        await Promise.all(pending);
      });

      for (const [name, p] of [["burst", burst], ["paced", paced]]) {
        if (p.missing || p.badSignatures || p.duplicates || p.callErrors) {
          console.log(`   ${name}: missing ${p.missing}, bad signatures ${p.badSignatures}, duplicates ${p.duplicates}, failed calls ${p.callErrors}`);
        }
      }
      console.log(
        "   producer rows: req/s = events produced/s, latency of the call; delivery rows: delay from the event's commit (createdAt) to its arrival",
      );
      return {
        results: [
          { ...burst.producer, name: `burst: ${source.label} x${settings.concurrency} (${source.perCall} ${source.type} each)` },
          { ...burst.perDelivery, name: `burst: ${source.type} -> 2xx, per delivery` },
          { ...burst.perEvent, name: `burst: event delivered to all ${ENDPOINTS}` },
          { ...paced.producer, name: `paced: ${source.label} every ${PACE_MS} ms` },
          { ...paced.perDelivery, name: `paced: ${source.type} -> 2xx, per delivery` },
          { ...paced.perEvent, name: `paced: event delivered to all ${ENDPOINTS}` },
        ],
        ratios: [
          { label: "burst: events fully delivered/s", value: burst.perEvent.rps },
          { label: "burst: deliveries/s", value: burst.perDelivery.rps },
          { label: "burst: deliveries/s once the producer stopped (drain)", value: burst.drainRate },
          { label: "burst: delivered events/s / produced events/s", value: burst.perEvent.rps / burst.producer.rps },
        ],
      };
    } finally {
      for (const hook of hooks) await api(`/team/webhook/${hook.id}`, { method: "DELETE", key }).catch(() => {});
      receiver.server.closeAllConnections?.();
      await new Promise((r) => receiver.server.close(r));
    }
  },
};
