import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../src/ratelimit/rate-limiter";
import { probeRouter, testApp } from "./helpers/test-app";
import { BASE, call, createTeam, createUser, insertKey, json } from "./helpers/world";

const WINDOW = 60_000;
let counter = 0;
/** A limiter of its own per test: names are never shared. */
function limiter(name = `test-${Date.now()}-${counter++}`) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
}
function keyLimiter(keyId: string) {
  return limiter(`key:${keyId}`);
}

const get = (fetcher: (r: Request) => Promise<Response>, path: string, key?: string, headers: Record<string, string> = {}) =>
  fetcher(new Request(BASE + path, { headers: { ...(key ? { "x-api-key": key } : {}), ...headers } }));

function expectRateHeaders(res: Response, limit: number) {
  const nowSeconds = Math.floor(Date.now() / 1000);
  expect(res.headers.get("x-ratelimit-limit")).toBe(String(limit));
  const remaining = Number(res.headers.get("x-ratelimit-remaining"));
  expect(Number.isInteger(remaining) && remaining >= 0 && remaining <= limit).toBe(true);
  const reset = Number(res.headers.get("x-ratelimit-reset"));
  // Unix seconds (not milliseconds, not a duration), at most one window ahead.
  expect(Number.isInteger(reset)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(nowSeconds);
  expect(reset).toBeLessThanOrEqual(nowSeconds + 61);
}

describe("per-key limit under concurrency", () => {
  it("150 simultaneous requests with one publishable key: exactly 100 pass and 50 get 429", async () => {
    const app = testApp([probeRouter()]);
    const team = await createTeam();
    const responses = await Promise.all(Array.from({ length: 150 }, () => get(app, "/chat/known", team.pk)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
    // Each accepted request saw a distinct remaining count: 99..0.
    const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get("x-ratelimit-remaining")));
    expect(new Set(remaining).size).toBe(100);
    expect(Math.min(...remaining)).toBe(0);
    for (const r of responses) expectRateHeaders(r, 100);
  });

  it("the same through the real Worker: a publishable key is counted on every request, 403s included", async () => {
    const team = await createTeam();
    const responses = await Promise.all(Array.from({ length: 150 }, () => call("GET", "/team", { key: team.pk })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 403)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(50);
  });

  it("keys do not share a window", async () => {
    const app = testApp([probeRouter()]);
    const team = await createTeam();
    const other = await insertKey("publishable", { teamId: team.id });
    await Promise.all(Array.from({ length: 100 }, () => get(app, "/chat/known", team.pk)));
    expect((await get(app, "/chat/known", team.pk)).status).toBe(429);
    expect((await get(app, "/chat/known", other.key)).status).toBe(200);
  });
});

describe("headers and the 429", () => {
  it("puts X-RateLimit-* on every response to a valid key, errors included", async () => {
    const team = await createTeam();
    const user = await createUser();
    const cases: [Response, number, number][] = [
      [await call("GET", "/team", { key: user.userKey }), 200, 1000],
      [await call("GET", "/team", { key: team.sk }), 403, 1000],
      [await call("GET", "/team", { key: team.pk }), 403, 100],
      [await call("GET", "/no/such/route", { key: team.sk }), 404, 1000],
      [await call("POST", "/team", { key: user.userKey, body: "{not json" }), 400, 1000],
      [await call("POST", "/team", { key: user.userKey, body: { name: 7 } }), 400, 1000],
      [await call("GET", `/team/${team.id}`, { key: user.userKey }), 403, 1000],
      [await call("POST", "/team", { key: user.userKey, body: JSON.stringify({ name: "x".repeat(1_100_000) }) }), 413, 1000],
    ];
    for (const [res, status, limit] of cases) {
      expect(res.status).toBe(status);
      expectRateHeaders(res, limit);
    }
    // Counted one by one: the 413 is the user key's fifth request.
    expect(cases[7]?.[0].headers.get("x-ratelimit-remaining")).toBe(String(1000 - 5));
  });

  it("answers 429 with error, a message saying how long to wait, retryAfter and Retry-After", async () => {
    const app = testApp([probeRouter()]);
    const team = await createTeam();
    await Promise.all(Array.from({ length: 100 }, () => get(app, "/chat/known", team.pk)));
    const res = await get(app, "/chat/known", team.pk);
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toContain("application/json");
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(["error", "message", "retryAfter"]);
    expect(body.error).toBe("Too Many Requests");
    expect(Number.isInteger(body.retryAfter)).toBe(true);
    expect(body.retryAfter).toBeGreaterThanOrEqual(1);
    expect(body.retryAfter).toBeLessThanOrEqual(60);
    expect(body.message).toContain(`${body.retryAfter} second`);
    expect(res.headers.get("retry-after")).toBe(String(body.retryAfter));
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expectRateHeaders(res, 100);
    // Browsers may read them across origins.
    const exposed = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase();
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"]) {
      expect(exposed).toContain(h);
    }
  });
});

describe("the RateLimiter Durable Object", () => {
  it("slides: no double burst at a minute boundary, a slot frees exactly when the oldest hit leaves", async () => {
    const stub = limiter();
    const t0 = 1_700_000_059_000; // one second before a minute boundary
    for (let i = 0; i < 3; i++) expect((await stub.hit(3, WINDOW, t0)).allowed).toBe(true);
    // A fixed window would start afresh at the boundary and let 3 more through.
    const after = await stub.hit(3, WINDOW, t0 + 2_000);
    expect(after).toEqual({
      allowed: false,
      limit: 3,
      remaining: 0,
      reset: Math.ceil((t0 + WINDOW) / 1000),
      retryAfter: 58,
    });
    // Still inside the window of the first hits: denied (and denials are not counted).
    expect((await stub.hit(3, WINDOW, t0 + WINDOW - 1)).allowed).toBe(false);
    // The three hits at t0 leave the window at t0 + WINDOW: three slots free.
    const freed = await stub.hit(3, WINDOW, t0 + WINDOW);
    expect(freed).toMatchObject({ allowed: true, remaining: 2, retryAfter: 0 });
    expect((await stub.hit(3, WINDOW, t0 + WINDOW)).allowed).toBe(true);
    expect((await stub.hit(3, WINDOW, t0 + WINDOW)).allowed).toBe(true);
    expect((await stub.hit(3, WINDOW, t0 + WINDOW)).allowed).toBe(false);
  });

  it("slides over spread-out hits: each one frees its own slot", async () => {
    const stub = limiter();
    const t0 = 1_700_000_000_000;
    expect((await stub.hit(2, WINDOW, t0)).allowed).toBe(true);
    expect((await stub.hit(2, WINDOW, t0 + 30_000)).allowed).toBe(true);
    const denied = await stub.hit(2, WINDOW, t0 + 45_000);
    expect(denied).toMatchObject({ allowed: false, retryAfter: 15, reset: Math.ceil((t0 + WINDOW) / 1000) });
    expect((await stub.hit(2, WINDOW, t0 + 60_001)).allowed).toBe(true);
    expect((await stub.hit(2, WINDOW, t0 + 60_002)).allowed).toBe(false);
    expect((await stub.hit(2, WINDOW, t0 + 90_001)).allowed).toBe(true);
  });

  it("prunes expired hits from storage in batches, and stale rows never count after a reload", async () => {
    const stub = limiter();
    const t0 = 1_700_000_000_000;
    const stored = () =>
      runInDurableObject(stub, (_instance: RateLimiter, state) =>
        state.storage.sql.exec<{ ts: number }>("SELECT ts FROM hits ORDER BY ts").toArray().map((r) => r.ts),
      );
    for (let i = 0; i < 70; i++) await stub.hit(100, WINDOW, t0 + i);
    // 5 of the 70 leave the window: fewer than a prune batch, so their rows may stay...
    await stub.hit(100, WINDOW, t0 + WINDOW + 4);
    expect((await stored()).length).toBe(71);
    // ...and they do not count after an eviction reloads the log from storage.
    await evictDurableObject(stub);
    expect(await stub.hit(100, WINDOW, t0 + WINDOW + 5)).toMatchObject({ allowed: true, remaining: 100 - 66 });
    // Once 64 or more have expired, storage keeps only the hits of the current window.
    await stub.hit(100, WINDOW, t0 + WINDOW + 69);
    expect(await stored()).toEqual([t0 + WINDOW + 4, t0 + WINDOW + 5, t0 + WINDOW + 69]);
  });

  it("survives eviction mid-window (the log is in durable storage)", async () => {
    const stub = limiter();
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 3; i++) expect((await stub.hit(3, WINDOW, t0 + i)).allowed).toBe(true);
    await evictDurableObject(stub);
    expect(await stub.hit(3, WINDOW, t0 + 10)).toMatchObject({ allowed: false, remaining: 0 });
    expect((await stub.hit(3, WINDOW, t0 + WINDOW)).allowed).toBe(true);
  });

  it("a key's count survives eviction between two requests through the Worker", async () => {
    const team = await createTeam();
    for (let i = 0; i < 5; i++) expect((await call("GET", "/team", { key: team.sk })).status).toBe(403);
    await evictDurableObject(keyLimiter(team.skId));
    const res = await call("GET", "/team", { key: team.sk });
    expect(res.headers.get("x-ratelimit-remaining")).toBe(String(1000 - 6));
  });
});

describe("requests without a valid key", () => {
  const anonymousLimit = Number(env.RATE_LIMIT_ANONYMOUS);

  it(`are limited per client address: 429 after ${env.RATE_LIMIT_ANONYMOUS} a minute`, async () => {
    const from = (ip: string, key?: string) => get((r) => exports.default.fetch(r), "/team", key, { "cf-connecting-ip": ip });
    const guesses = await Promise.all(
      Array.from({ length: anonymousLimit }, (_, i) => from("198.51.100.7", i % 2 ? "sk_live_" + "g".repeat(32) + i : undefined)),
    );
    expect(guesses.map((r) => r.status)).toEqual(Array(anonymousLimit).fill(401));
    expectRateHeaders(guesses[0] as Response, anonymousLimit);

    const blocked = await from("198.51.100.7", "sk_live_" + "h".repeat(40));
    expect(blocked.status).toBe(429);
    const body = await json(blocked);
    expect(body.error).toBe("Too Many Requests");
    expect(blocked.headers.get("retry-after")).toBe(String(body.retryAfter));

    // Another address is not affected, and a valid key from the blocked address still works.
    expect((await from("198.51.100.8")).status).toBe(401);
    const user = await createUser();
    expect((await from("198.51.100.7", user.userKey)).status).toBe(200);
  });

  it("invitation acceptance (no key) is limited per address as well", async () => {
    const accept = () =>
      exports.default.fetch(
        new Request(BASE + "/invitations/accept", {
          method: "POST",
          headers: { "content-type": "application/json", "cf-connecting-ip": "198.51.100.9" },
          body: JSON.stringify({ token: "inv_" + "x".repeat(40) }),
        }),
      );
    const first = await Promise.all(Array.from({ length: anonymousLimit }, accept));
    expect(first.map((r) => r.status)).toEqual(Array(anonymousLimit).fill(400));
    expect((await accept()).status).toBe(429);
  });
});
