import { describe, expect, it } from "vitest";
import { call, createWorld, json } from "./helpers/world";

describe("foundation", () => {
  it("serves /health without a key", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  it("answers 401 with only a message for a missing or unknown key", async () => {
    for (const key of [undefined, "sk_live_nope", "sk_live_" + "x".repeat(40)]) {
      const res = await call("GET", "/team", { key });
      expect(res.status).toBe(401);
      const body = await json(res);
      expect(Object.keys(body)).toEqual(["message"]);
    }
  });

  it("lets a user key list and create teams", async () => {
    const w = await createWorld();
    const created = await call("POST", "/team", { key: w.owner.userKey, body: { name: "New", metadata: { a: "b" } } });
    expect(created.status).toBe(201);
    const list = await json<unknown[]>(await call("GET", "/team", { key: w.owner.userKey }));
    expect(list).toHaveLength(2);
    const detail = await call("GET", `/team/${w.teamA.id}`, { key: w.owner.userKey });
    expect(detail.status).toBe(200);
    expect(detail.headers.get("x-ratelimit-limit")).toBe("1000");
  });
});
