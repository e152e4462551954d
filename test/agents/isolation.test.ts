import { describe, expect, it } from "vitest";
import { call, createWorld, json } from "../helpers/world";
import { createAgent, putAgent } from "./helpers";

/** Every agent route, with a body where it takes one. */
const routes = (id: string) =>
  [
    ["GET", `/agent/${id}`, undefined],
    ["PUT", `/agent/${id}`, { name: "Hijacked" }],
    ["PUT", `/agent/${id}/rollback`, undefined],
    ["GET", `/agent/${id}/versions`, undefined],
    ["GET", `/agent/${id}/versions/1`, undefined],
    ["DELETE", `/agent/${id}`, undefined],
  ] as const;

describe("agents: team isolation and key types", () => {
  it("answers 404 for another team's agent on every route and never changes it", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { description: "mine" });
    await putAgent(w.teamA.sk, a.id, { description: "mine v2" });
    for (const [method, path, body] of routes(a.id)) {
      const res = await call(method, path, { key: w.teamB.sk, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      // The same through a user key of team B's owner.
      const viaUser = await call(method, `/team/${w.teamB.id}${path}`, { key: w.outsider.userKey, body });
      expect(viaUser.status, `user ${method} ${path}`).toBe(404);
    }
    expect((await json(await call("GET", "/agent", { key: w.teamB.sk }))).agents).toEqual([]);
    expect((await json(await call("GET", `/team/${w.teamB.id}/agents`, { key: w.outsider.userKey }))).agents).toEqual([]);
    const detail = await json(await call("GET", `/agent/${a.id}`, { key: w.teamA.sk }));
    expect(detail).toMatchObject({ name: "Helper", description: "mine v2", version: 2, latestVersion: 2 });
  });

  it("serves every route under /team/{teamId} for a user key of an OWNER or ADMIN", async () => {
    const w = await createWorld();
    const base = `/team/${w.teamA.id}`;
    for (const user of [w.owner, w.admin]) {
      const created = await createAgent(user.userKey, { description: "by user" }, base);
      expect(created.teamId).toBe(w.teamA.id);
      const list = await json(await call("GET", `${base}/agents`, { key: user.userKey }));
      expect(list.agents.map((x: { id: string }) => x.id)).toContain(created.id);
      expect(await json(await call("GET", `${base}/agent`, { key: user.userKey }))).toEqual(list);
      // Visible to the team key: it is the same team.
      expect((await call("GET", `/agent/${created.id}`, { key: w.teamA.sk })).status).toBe(200);

      const u = await call("PUT", `${base}/agent/${created.id}`, { key: user.userKey, body: { description: "v2" } });
      expect(u.status).toBe(200);
      expect((await json(await call("GET", `${base}/agent/${created.id}`, { key: user.userKey }))).description).toBe("v2");
      expect((await json(await call("GET", `${base}/agent/${created.id}/versions`, { key: user.userKey }))).versions).toHaveLength(2);
      expect((await call("GET", `${base}/agent/${created.id}/versions/1`, { key: user.userKey })).status).toBe(200);
      const rb = await call("PUT", `${base}/agent/${created.id}/rollback`, { key: user.userKey });
      expect((await json(rb)).version).toBe(1);
      expect((await call("DELETE", `${base}/agent/${created.id}`, { key: user.userKey })).status).toBe(204);
    }
  });

  it("refuses user keys without a managing role in the team, and user keys on bare paths", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    for (const user of [w.member, w.outsider]) {
      for (const [method, path, body] of [...routes(a.id), ["GET", "/agents", undefined], ["POST", "/agent", { name: "x" }]] as const) {
        const res = await call(method, `/team/${w.teamA.id}${path}`, { key: user.userKey, body });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    }
    // A team key may not use another team's path either.
    expect((await call("GET", `/team/${w.teamA.id}/agents`, { key: w.teamB.sk })).status).toBe(403);
    // Without /team/{teamId} a user key names no team.
    const bare = await call("GET", "/agent", { key: w.owner.userKey });
    expect(bare.status).toBe(400);
    expect((await json(bare)).message).toContain("/team/{teamId}");
    expect((await json(await call("GET", `/agent/${a.id}`, { key: w.teamA.sk }))).version).toBe(1);
  });

  it("refuses publishable keys (403) and missing keys (401) on every agent route", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    for (const [method, path, body] of [...routes(a.id), ["GET", "/agent", undefined], ["GET", "/agents", undefined], ["POST", "/agent", { name: "x" }]] as const) {
      const pk = await call(method, path, { key: w.teamA.pk, body });
      expect(pk.status, `${method} ${path}`).toBe(403);
      expect((await json(pk)).allowedEndpoints).toBeInstanceOf(Array);
      expect((await call(method, path, { body })).status).toBe(401);
    }
  });
});
