import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import * as service from "../../src/agents/service";
import { createDb } from "../../src/db/client";
import { call, createWorld, json } from "../helpers/world";
import { createAgent, putAgent } from "./helpers";

const rollback = (key: string, id: string) => call("PUT", `/agent/${id}/rollback`, { key });
const detailOf = async (key: string, id: string) => json(await call("GET", `/agent/${id}`, { key }));

async function eventsOf(agentId: string): Promise<Record<string, any>[]> {
  const { results } = await env.DB.prepare(
    "SELECT type, data FROM events WHERE json_extract(data, '$.id') = ? ORDER BY rowid",
  )
    .bind(agentId)
    .all<{ type: string; data: string }>();
  return results.map((r) => ({ ...(JSON.parse(r.data) as Record<string, any>), event: r.type }));
}

describe("agents: versions and rollback", () => {
  it("numbers versions across update, rollback, update and rolls back by number", async () => {
    const w = await createWorld();
    const k = w.teamA.sk;
    const a = await createAgent(k, { description: "one" });
    expect(a.version).toBe(1);
    expect((await json(await putAgent(k, a.id, { description: "two" }))).version).toBe(2);
    expect((await json(await putAgent(k, a.id, { description: "three", temperature: 0.1 }))).version).toBe(3);

    let res = await rollback(k, a.id);
    expect(res.status).toBe(200);
    const rb = await json(res);
    expect(rb).toMatchObject({ id: a.id, name: "Helper", version: 2 });
    expect(new Date(rb.rolledBackAt).toISOString()).toBe(rb.rolledBackAt);
    expect(await detailOf(k, a.id)).toMatchObject({
      description: "two",
      temperature: 0.7,
      version: 2,
      latestVersion: 3,
      rolledBackAt: rb.rolledBackAt,
    });

    expect((await json(await rollback(k, a.id))).version).toBe(1);
    expect((await detailOf(k, a.id)).description).toBe("one");

    res = await rollback(k, a.id);
    expect(res.status).toBe(409);
    const refused = await json(res);
    expect(refused.error).toBe("Conflict");
    expect(refused.message).toContain("no earlier version");
    expect((await detailOf(k, a.id)).version).toBe(1);

    // An update after a rollback goes on top of the history, based on the version in force.
    const up = await json(await putAgent(k, a.id, { name: "Four" }));
    expect(up.version).toBe(4);
    expect(await detailOf(k, a.id)).toMatchObject({ name: "Four", description: "one", version: 4, latestVersion: 4 });

    const list = await json(await call("GET", `/agent/${a.id}/versions`, { key: k }));
    expect(list).toMatchObject({ agentId: a.id, version: 4, latestVersion: 4 });
    expect(list.versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3, 4]);
    expect(list.versions.map((v: { inForce: boolean }) => v.inForce)).toEqual([false, false, false, true]);
    expect(list.versions[1].changes).toEqual(["description"]);
    expect(list.versions[2].changes).toEqual(["description", "temperature"]);
    // v4 (one + name Four) compared with v3 (three, 0.1).
    expect(list.versions[3].changes).toEqual(["name", "description", "temperature"]);

    // "Previous" is by number: rolling back from v4 restores v3, not v1.
    expect((await json(await rollback(k, a.id))).version).toBe(3);
    expect(await detailOf(k, a.id)).toMatchObject({ name: "Helper", description: "three", temperature: 0.1 });
    const after = await json(await call("GET", `/agent/${a.id}/versions`, { key: k }));
    expect(after.versions.filter((v: { inForce: boolean }) => v.inForce).map((v: { version: number }) => v.version)).toEqual([3]);
  });

  it("returns one version's configuration, so a user can see what a rollback restores", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { systemPrompt: "first", tools: ["AgentKnowledgeTool"] });
    await putAgent(w.teamA.sk, a.id, { systemPrompt: "second" });
    const res = await call("GET", `/agent/${a.id}/versions/1`, { key: w.teamA.sk });
    expect(res.status).toBe(200);
    const v1 = await json(res);
    expect(v1).toMatchObject({ agentId: a.id, version: 1, inForce: false });
    expect(v1.config).toMatchObject({ name: "Helper", systemPrompt: "first", tools: ["AgentKnowledgeTool"], temperature: 0.7 });
    expect((await json(await call("GET", `/agent/${a.id}/versions/2`, { key: w.teamA.sk }))).inForce).toBe(true);
    const missing = await call("GET", `/agent/${a.id}/versions/3`, { key: w.teamA.sk });
    expect(missing.status).toBe(404);
  });

  it("emits agent.updated on create and update and agent.rolled_back on rollback, nothing on a refused rollback", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    await putAgent(w.teamA.sk, a.id, { description: "new" });
    await rollback(w.teamA.sk, a.id);
    expect((await rollback(w.teamA.sk, a.id)).status).toBe(409);
    expect((await putAgent(w.teamA.sk, a.id, { temperature: 5 })).status).toBe(400);
    const events = await eventsOf(a.id);
    expect(events.map((e) => [e.event, e.version])).toEqual([
      ["agent.updated", 1],
      ["agent.updated", 2],
      ["agent.rolled_back", 1],
    ]);
    expect(events[1]).toMatchObject({ teamId: w.teamA.id, changes: ["description"], description: "new" });
    expect(events[2]).toMatchObject({ fromVersion: 2, description: "" });
  });

  it("keeps a gapless, consistent history under 10 concurrent updates", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => putAgent(w.teamA.sk, a.id, { description: `writer ${i}`, notes: `n${i}` })),
    );
    const bodies = await Promise.all(results.map((r) => json(r)));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(bodies.map((b) => b.version).sort((x, y) => x - y)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);

    const list = await json(await call("GET", `/agent/${a.id}/versions`, { key: w.teamA.sk }));
    expect(list.versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(list).toMatchObject({ version: 11, latestVersion: 11 });

    const detail = await detailOf(w.teamA.sk, a.id);
    const latest = await json(await call("GET", `/agent/${a.id}/versions/11`, { key: w.teamA.sk }));
    const { config } = latest;
    for (const [field, value] of Object.entries(config)) expect(detail[field], field).toEqual(value);
    // Each response's version holds exactly that writer's change.
    for (const b of bodies) {
      const v = await json(await call("GET", `/agent/${a.id}/versions/${b.version}`, { key: w.teamA.sk }));
      const writer = bodies.indexOf(b);
      expect(v.config).toMatchObject({ description: `writer ${writer}`, notes: `n${writer}` });
      expect(v.changes).toEqual(["description", "notes"]);
    }
    const events = await eventsOf(a.id);
    expect(events.map((e) => e.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("applies concurrent rollbacks one after the other", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { description: "v1" });
    for (let i = 2; i <= 5; i++) await putAgent(w.teamA.sk, a.id, { description: `v${i}` });
    const results = await Promise.all([1, 2, 3].map(() => rollback(w.teamA.sk, a.id)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    const versions = (await Promise.all(results.map((r) => json(r)))).map((b) => b.version).sort();
    expect(versions).toEqual([2, 3, 4]);
    expect(await detailOf(w.teamA.sk, a.id)).toMatchObject({ version: 2, latestVersion: 5, description: "v2" });
    expect((await eventsOf(a.id)).filter((e) => e.event === "agent.rolled_back")).toHaveLength(3);
  });

  it("mixes concurrent updates and rollbacks without gaps or half-written states", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { description: "start" });
    await putAgent(w.teamA.sk, a.id, { description: "second" });
    const ops = Array.from({ length: 8 }, (_, i) =>
      i % 3 === 2 ? rollback(w.teamA.sk, a.id) : putAgent(w.teamA.sk, a.id, { description: `u${i}` }),
    );
    const results = await Promise.all(ops);
    for (const r of results) expect([200, 409]).toContain(r.status);
    const updates = results.filter((_, i) => i % 3 !== 2);
    expect(updates.map((r) => r.status)).toEqual(Array(updates.length).fill(200));
    const list = await json(await call("GET", `/agent/${a.id}/versions`, { key: w.teamA.sk }));
    const numbers = list.versions.map((v: { version: number }) => v.version);
    expect(numbers).toEqual(Array.from({ length: 2 + updates.length }, (_, i) => i + 1));
    const detail = await detailOf(w.teamA.sk, a.id);
    const inForce = await json(await call("GET", `/agent/${a.id}/versions/${detail.version}`, { key: w.teamA.sk }));
    for (const [field, value] of Object.entries(inForce.config)) expect(detail[field], field).toEqual(value);
  });
});

/**
 * Deterministic races: a database whose n-th batch first lets another writer commit, as a
 * concurrent request would between our read and our write.
 */
describe("agents: a write racing between read and commit", () => {
  function racingSink(onBatch: number, race: () => Promise<unknown>) {
    const db = createDb(env.DB);
    const pending: Promise<unknown>[] = [];
    let calls = 0;
    const racing = Object.create(db) as typeof db;
    racing.batch = (async (statements: Parameters<typeof db.batch>[0]) => {
      calls += 1;
      if (calls === onBatch) await race();
      return db.batch(statements);
    }) as unknown as typeof db.batch;
    return { sink: { env, db: racing, waitUntil: (p: Promise<unknown>) => void pending.push(p) }, settle: () => Promise.all(pending) };
  }
  const plainSink = () => ({ env, db: createDb(env.DB), waitUntil: () => undefined });

  it("an update whose state was rolled back meanwhile retries on top of the rollback", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { description: "v1" });
    await putAgent(w.teamA.sk, a.id, { description: "v2", temperature: 0.2 });
    // Batch 1 is the update's read, batch 2 its write: the rollback commits in between.
    const { sink, settle } = racingSink(2, () => service.rollbackAgent(plainSink(), w.teamA.id, a.id));
    const result = await service.updateAgent(sink, w.teamA.id, a.id, { notes: "added" });
    await settle();
    expect(result.version).toBe(3);
    const detail = await detailOf(w.teamA.sk, a.id);
    // Based on v1 (what the rollback restored), not on the stale v2 read first.
    expect(detail).toMatchObject({ version: 3, latestVersion: 3, description: "v1", temperature: 0.7, notes: "added" });
    const list = await json(await call("GET", `/agent/${a.id}/versions`, { key: w.teamA.sk }));
    expect(list.versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3]);
    expect(list.versions[2].changes).toEqual(["description", "notes", "temperature"]);
    expect((await eventsOf(a.id)).map((e) => [e.event, e.version])).toEqual([
      ["agent.updated", 1],
      ["agent.updated", 2],
      ["agent.rolled_back", 1],
      ["agent.updated", 3],
    ]);
  });

  it("a rollback whose state was updated meanwhile retries from the new version", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { description: "v1" });
    await putAgent(w.teamA.sk, a.id, { description: "v2" });
    // The rollback reads the agent, then the target version, then writes (its first batch).
    const { sink, settle } = racingSink(1, () => service.updateAgent(plainSink(), w.teamA.id, a.id, { description: "v3" }));
    const result = await service.rollbackAgent(sink, w.teamA.id, a.id);
    await settle();
    expect(result.version).toBe(2);
    expect(await detailOf(w.teamA.sk, a.id)).toMatchObject({ version: 2, latestVersion: 3, description: "v2" });
    expect((await eventsOf(a.id)).map((e) => [e.event, e.version])).toEqual([
      ["agent.updated", 1],
      ["agent.updated", 2],
      ["agent.updated", 3],
      ["agent.rolled_back", 2],
    ]);
  });
});
