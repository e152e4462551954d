import { describe, expect, it } from "vitest";
import { call, createWorld, json } from "../helpers/world";

/**
 * The team-scoped routers are mounted twice: at the root (team keys) and under /team/{teamId}
 * (user keys). "webhook" is not a team id (SPEC.md puts the team-key webhooks at /team/webhook),
 * so /team/webhook/<team-scoped route> must be no route at all, not a second door to the caller's team.
 */
describe("/team/webhook/... is not a team", { timeout: 30_000 }, () => {
  it("team-scoped routes under /team/webhook answer 404 and change nothing", async () => {
    const w = await createWorld();
    const agent = await json(await call("POST", "/agent", { key: w.teamA.sk, body: { name: "A" } }));
    for (const [method, path, body] of [
      ["GET", "/team/webhook/agent"],
      ["GET", `/team/webhook/agent/${agent.id}`],
      ["PUT", `/team/webhook/agent/${agent.id}`, { name: "renamed" }],
      ["DELETE", `/team/webhook/agent/${agent.id}`],
      ["POST", "/team/webhook/agent", { name: "B" }],
      ["POST", "/team/webhook/agent", { wrong: true }],
      ["POST", "/team/webhook/chat", { agentId: agent.id }],
      ["GET", "/team/webhook/chat"],
      ["GET", "/team/webhook/file"],
    ] as const) {
      for (const key of [w.teamA.sk, w.owner.userKey]) {
        const res = await call(method, path, { key, body });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect(await json(res)).toMatchObject({ error: "Not Found" });
      }
    }
    const after = await json(await call("GET", `/agent/${agent.id}`, { key: w.teamA.sk }));
    expect(after.name).toBe("A");
    expect((await json(await call("GET", "/agent", { key: w.teamA.sk }))).agents).toHaveLength(1);
    expect((await json(await call("GET", "/chat", { key: w.teamA.sk }))).chats).toHaveLength(0);
  });

  it("the webhook routes themselves still answer there", async () => {
    const w = await createWorld();
    expect((await call("GET", "/team/webhook", { key: w.teamA.sk })).status).toBe(200);
    expect((await call("GET", "/team/webhook/events", { key: w.teamA.sk })).status).toBe(200);
  });
});
