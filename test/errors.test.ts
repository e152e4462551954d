import { env, exports } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { boomRouter, probeRouter, testApp, type Fetcher } from "./helpers/test-app";
import { BASE, addMember, call, createTeam, createUser, json } from "./helpers/world";

const MAX = Number(env.MAX_BODY_BYTES);
const app = testApp([probeRouter(), boomRouter()]);

function post(fetcher: Fetcher, path: string, key: string | undefined, body: BodyInit, headers: Record<string, string> = {}) {
  return fetcher(
    new Request(BASE + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { "x-api-key": key } : {}), ...headers },
      body,
      ...(body instanceof ReadableStream ? { duplex: "half" } : {}),
    } as RequestInit),
  );
}

/** A body sent in chunks without a Content-Length (Transfer-Encoding: chunked on the wire). */
function chunked(text: string, chunkSize = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

async function expectEnvelope(res: Response, status: number, error: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toContain("application/json");
  const body = await json(res);
  expect(body.error).toBe(error);
  expect(typeof body.message).toBe("string");
  return body;
}

describe("400: invalid requests", () => {
  it("malformed JSON is a 400 in the envelope, not a 500", async () => {
    const user = await createUser();
    for (const text of ["{not json", '{"name": "a",}', "", "nul"]) {
      const res = await call("POST", "/team", { key: user.userKey, body: text });
      expect(res.status).toBe(400);
      expect((await json(res)).error).toBe("Bad Request");
    }
  });

  it("names every missing, invalid and unknown field", async () => {
    const team = await createTeam();
    const res = await post(app, "/probe", team.sk, JSON.stringify({ count: 1.5, extra: true }));
    const body = await expectEnvelope(res, 400, "Bad Request");
    const fields = (body.fields as { field: string; message: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual(["count", "extra", "name"]);
    for (const f of ["name", "count", "extra"]) expect(body.message).toContain(f);
    expect(body.message).toContain("name: Required");
  });

  it("names nested fields of a real route", async () => {
    const user = await createUser();
    const res = await call("POST", "/team", { key: user.userKey, body: { name: "", metadata: { plan: 3 } } });
    const body = await expectEnvelope(res, 400, "Bad Request");
    expect((body.fields as { field: string }[]).map((f) => f.field).sort()).toEqual(["metadata.plan", "name"]);
  });

  it("a JSON value that is not an object is a 400 naming the body", async () => {
    const user = await createUser();
    for (const text of ["[]", '"team"', "null", "42"]) {
      const res = await call("POST", "/team", { key: user.userKey, body: text });
      expect(res.status).toBe(400);
    }
  });

  it("a body that is not JSON by its content type is a 415 in the envelope", async () => {
    const user = await createUser();
    const res = await call("POST", "/team", {
      key: user.userKey,
      body: "name=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    const body = await expectEnvelope(res, 415, "Unsupported Media Type");
    expect(body.message).toContain("application/json");
  });
});

describe("404", () => {
  it("an unknown route with a valid key is a JSON 404", async () => {
    const team = await createTeam();
    for (const [method, path] of [
      ["GET", "/nothing/here"],
      ["PATCH", "/team"],
    ] as const) {
      const body = await expectEnvelope(await call(method, path, { key: team.sk }), 404, "Not Found");
      expect(body.message).toContain(path);
    }
    // Under a team the user manages; elsewhere under /team/{teamId}/ the role check answers 403 first.
    const user = await createUser();
    await addMember(team.id, user.id, "ADMIN");
    await expectEnvelope(await call("POST", `/team/${team.id}/x/y`, { key: user.userKey }), 404, "Not Found");
    expect((await call("POST", `/team/team_other/x/y`, { key: user.userKey })).status).toBe(403);
  });

  it("/team/webhook is not a team: team-management routes that match it answer 404, not 500", async () => {
    const team = await createTeam();
    for (const [method, path, body] of [
      ["PUT", "/team/webhook", { name: "x" }],
      ["GET", "/team/webhook/members"],
      ["DELETE", "/team/webhook/keys/key_1"],
      ["PUT", "/team/webhook/members/user_1", { role: "ADMIN" }],
      ["GET", "/team/webhook/invitations"],
    ] as const) {
      const res = await call(method, path, { key: team.sk, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
  });

  it("an unknown route without a key is 401 (the key is checked first)", async () => {
    expect((await call("GET", "/nothing/here")).status).toBe(401);
  });

  it("an unknown record is a JSON 404", async () => {
    const team = await createTeam();
    const res = await app(new Request(BASE + "/chat/nope", { headers: { "x-api-key": team.sk } }));
    const body = await expectEnvelope(res, 404, "Not Found");
    expect(body.message).toBe("Chat not found.");
  });
});

describe("413: body size", () => {
  it(`a body over MAX_BODY_BYTES (${env.MAX_BODY_BYTES}) with a Content-Length is a 413 with rate-limit headers`, async () => {
    const user = await createUser();
    const res = await call("POST", "/team", { key: user.userKey, body: JSON.stringify({ name: "x".repeat(MAX) }) });
    const body = await expectEnvelope(res, 413, "Payload Too Large");
    expect(body.message).toContain(String(MAX));
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
  });

  it("a chunked body over the limit (no Content-Length) is a 413 as well", async () => {
    const user = await createUser();
    const res = await post((r) => exports.default.fetch(r), "/team", user.userKey, chunked(JSON.stringify({ name: "y".repeat(MAX + 10) })));
    await expectEnvelope(res, 413, "Payload Too Large");
  });

  it("a chunked body under the limit still reaches the handler intact", async () => {
    const team = await createTeam();
    const padding = " ".repeat(MAX - 200);
    const res = await post(app, "/probe", team.sk, chunked(`{"name":"chunked",${padding}"count":3}`, 1000));
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ teamId: team.id });
  });

  it("a body of exactly the limit is accepted", async () => {
    const team = await createTeam();
    const prefix = '{"name":"edge","count":1}';
    const res = await post(app, "/probe", team.sk, prefix + " ".repeat(MAX - prefix.length));
    expect(res.status).toBe(200);
  });

  it("a request with an invalid key gets its 401 before its body is read", async () => {
    const res = await post((r) => exports.default.fetch(r), "/team", "sk_live_" + "q".repeat(40), chunked("z".repeat(MAX + 10)), {
      "cf-connecting-ip": "203.0.113.50",
    });
    expect(res.status).toBe(401);
  });

  it("a request without a key is limited before anything else", async () => {
    const res = await post((r) => exports.default.fetch(r), "/team", undefined, chunked("z".repeat(MAX + 10)), {
      "cf-connecting-ip": "203.0.113.52",
    });
    await expectEnvelope(res, 413, "Payload Too Large");
  });

  it("a key header does not lift the limit of the invitation route (no key needed there)", async () => {
    const res = await post((r) => exports.default.fetch(r), "/invitations/accept", "sk_live_" + "q".repeat(40), chunked("z".repeat(MAX + 10)), {
      "cf-connecting-ip": "203.0.113.53",
    });
    await expectEnvelope(res, 413, "Payload Too Large");
  });

  it("the invitation route (no key) is limited too", async () => {
    const res = await post((r) => exports.default.fetch(r), "/invitations/accept", undefined, chunked("z".repeat(MAX + 10)), {
      "cf-connecting-ip": "203.0.113.51",
    });
    await expectEnvelope(res, 413, "Payload Too Large");
  });
});

describe("500", () => {
  // The details go to the log (Workers Logs), never to the client; kept out of the test output.
  let logged: ReturnType<typeof vi.spyOn>;
  beforeEach(() => {
    logged = vi.spyOn(console, "error").mockImplementation(() => {});
  });
  afterEach(() => logged.mockRestore());

  it("a thrown bug is a 500 with the envelope and a request id, no stack or internals", async () => {
    const team = await createTeam();
    const res = await app(new Request(BASE + "/probe/boom", { headers: { "x-api-key": team.sk } }));
    expect(String(logged.mock.calls[0]?.[0])).toContain("secret internals");
    const text = await res.clone().text();
    const body = await expectEnvelope(res, 500, "Internal Server Error");
    expect(Object.keys(body).sort()).toEqual(["error", "message"]);
    const requestId = res.headers.get("x-request-id");
    expect(requestId).toBeTruthy();
    expect(body.message).toContain(requestId);
    for (const leak of ["secret internals", "SELECT", "api_keys", ".ts", "stack", "    at "]) expect(text).not.toContain(leak);
    // The rate-limit headers are still there.
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
  });

  it("a bug in a route under /team/{teamId} too", async () => {
    const team = await createTeam();
    const user = await createUser();
    await addMember(team.id, user.id, "OWNER");
    const res = await app(new Request(`${BASE}/team/${team.id}/probe/boom`, { headers: { "x-api-key": user.userKey } }));
    await expectEnvelope(res, 500, "Internal Server Error");
  });
});

describe("never an HTML error page", () => {
  it("every error status answers JSON", async () => {
    const quiet = vi.spyOn(console, "error").mockImplementation(() => {});
    const team = await createTeam();
    const user = await createUser();
    const responses = await Promise.all([
      call("GET", "/nope", { key: team.sk }),
      call("GET", "/team"),
      call("GET", "/team", { key: team.pk }),
      call("GET", "/team", { key: team.sk }),
      call("POST", "/team", { key: user.userKey, body: "{" }),
      call("DELETE", `/team/${team.id}/keys/x`, { key: user.userKey }),
      call("GET", "/", { key: team.sk }),
      app(new Request(BASE + "/probe/boom", { headers: { "x-api-key": team.sk } })),
    ]);
    for (const res of responses) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(await res.text()).not.toMatch(/<html|<!doctype/i);
    }
    quiet.mockRestore();
  });
});

describe("CORS", () => {
  const preflight = (path: string, origin: string) =>
    exports.default.fetch(
      new Request(BASE + path, {
        method: "OPTIONS",
        headers: {
          origin,
          "access-control-request-method": "POST",
          "access-control-request-headers": "x-api-key, content-type",
        },
      }),
    );

  it("lets a page on any origin call the chat endpoints with x-api-key and Content-Type", async () => {
    for (const [path, origin] of [
      ["/chat", "https://shop.example"],
      ["/chat/chat_123/message", "http://localhost:5173"],
      ["/chat/chat_123", "https://another.example.org"],
    ] as const) {
      const res = await preflight(path, origin);
      expect(res.status).toBe(204);
      const allowOrigin = res.headers.get("access-control-allow-origin");
      expect(allowOrigin === "*" || allowOrigin === origin).toBe(true);
      const allowed = (res.headers.get("access-control-allow-headers") ?? "").toLowerCase();
      expect(allowed).toContain("x-api-key");
      expect(allowed).toContain("content-type");
      expect(res.headers.get("access-control-allow-methods")).toContain("POST");
    }
  });

  it("the actual cross-origin response carries the CORS headers and exposes the rate-limit headers", async () => {
    const team = await createTeam();
    const res = await app(
      new Request(BASE + "/chat/known", { headers: { "x-api-key": team.pk, origin: "https://shop.example" } }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("X-RateLimit-Remaining");
  });
});
