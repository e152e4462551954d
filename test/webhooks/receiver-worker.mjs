// An auxiliary Worker for the tests (vitest.config.ts: miniflare.workers + outboundService).
// Every outbound fetch of the Worker under test passes through here:
// - https://dns.webhook.test/dns-query: a DNS-over-HTTPS (JSON) resolver with a fixed table, for
//   the production URL guard.
// - https://<anything>.webhook.test/...: a webhook receiver, one Durable Object per host name,
//   that records every request and answers as its query string says:
//     ?fail=N    500 (or ?failStatus=S) to the first N requests, then 200
//     ?status=S  always S (e.g. 410, 503)
//     ?size=N    a 200 whose body is N bytes
//     ?redirect  a 302 to another receiver
//   GET https://<host>.webhook.test/__log returns the recorded requests as JSON.
// - any other host: passed through unchanged, so other tests' outbound calls behave as without it.
import { DurableObject } from "cloudflare:workers";

const DNS = {
  "rebind.webhook.test": { A: ["127.0.0.1"] },
  "private.webhook.test": { A: ["93.184.215.14", "10.1.2.3"] },
  "v6local.webhook.test": { AAAA: ["fd00::1"] },
  "nxdomain.webhook.test": null,
};
const PUBLIC_ADDRESS = "93.184.215.14";

function dohAnswer(url) {
  const name = (url.searchParams.get("name") ?? "").toLowerCase();
  const type = url.searchParams.get("type") ?? "A";
  const entry = name in DNS ? DNS[name] : { A: [PUBLIC_ADDRESS] };
  if (entry === null) return Response.json({ Status: 3 });
  const data = entry[type] ?? [];
  return Response.json({ Status: 0, Answer: data.map((d) => ({ name, type: type === "A" ? 1 : 28, TTL: 60, data: d })) });
}

export class Receiver extends DurableObject {
  async fetch(request) {
    const url = new URL(request.url);
    const log = (await this.ctx.storage.get("log")) ?? [];
    if (request.method === "GET" && url.pathname === "/__log") return Response.json(log);

    const body = await request.text();
    const fail = Number(url.searchParams.get("fail") ?? 0);
    let status = 200;
    let answer = "ok";
    if (url.searchParams.has("status")) status = Number(url.searchParams.get("status"));
    else if (log.length < fail) status = Number(url.searchParams.get("failStatus") ?? 500);
    if (url.searchParams.has("size")) answer = "x".repeat(Number(url.searchParams.get("size")));
    if (status >= 400) answer = `failing on purpose (${status})`;

    log.push({
      method: request.method,
      path: url.pathname,
      webhookId: request.headers.get("webhook-id"),
      timestamp: request.headers.get("webhook-timestamp"),
      signature: request.headers.get("webhook-signature"),
      contentType: request.headers.get("content-type"),
      body,
      status: url.searchParams.has("redirect") ? 302 : status,
    });
    await this.ctx.storage.put("log", log);
    if (url.searchParams.has("redirect")) {
      return new Response(null, { status: 302, headers: { location: "https://elsewhere.webhook.test/" } });
    }
    return new Response(answer, { status });
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.hostname === "dns.webhook.test") return dohAnswer(url);
    if (url.hostname.endsWith(".webhook.test")) {
      return env.RECEIVER.get(env.RECEIVER.idFromName(url.hostname)).fetch(request);
    }
    return fetch(request);
  },
};
