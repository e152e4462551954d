import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { searchKnowledge } from "../../src/knowledge/search";
import { call, createWorld } from "../helpers/world";
import { createAgent, settled, text, upload } from "./helpers";

describe("searchKnowledge: what an agent may see", { timeout: 30_000 }, () => {
  it("finds the team's files of this agent or of no agent, ready ones only, with file names", async () => {
    const w = await createWorld();
    const mine = await createAgent(w.teamA.sk, "Mine");
    const other = await createAgent(w.teamA.sk, "Other");
    await upload(w.teamA.sk, "shared.txt", text("The shared locker code is 4711 for every team member."));
    await upload(w.teamA.sk, "mine.txt", text("The private locker code for this assistant is 1234."), { agentId: mine });
    await upload(w.teamA.sk, "other.txt", text("The other locker code is 9876 and belongs elsewhere."), { agentId: other });
    await upload(w.teamB.sk, "team-b.txt", text("Team B's locker code is 5555."));
    for (const [key, name] of [[w.teamA.sk, "shared.txt"], [w.teamA.sk, "mine.txt"], [w.teamA.sk, "other.txt"], [w.teamB.sk, "team-b.txt"]] as const) {
      expect((await settled(key, name)).status).toBe("ready");
    }

    const found = await searchKnowledge(env, { teamId: w.teamA.id, agentId: mine, query: "What is the locker code?" });
    expect(found.map((p) => p.filename).sort()).toEqual(["mine.txt", "shared.txt"]);
    for (const p of found) {
      expect(p.fileId).toMatch(/^file_/);
      expect(p.score).toBeGreaterThan(0);
    }
    const forOther = await searchKnowledge(env, { teamId: w.teamA.id, agentId: other, query: "locker code" });
    expect(forOther.map((p) => p.filename).sort()).toEqual(["other.txt", "shared.txt"]);

    // Moving a file to another agent moves its passages with it, at once.
    await call("PUT", "/file?filename=mine.txt", { key: w.teamA.sk, body: { agentId: other } });
    expect((await searchKnowledge(env, { teamId: w.teamA.id, agentId: mine, query: "locker code" })).map((p) => p.filename)).toEqual([
      "shared.txt",
    ]);

    // A file being re-ingested is not searchable until it is ready again.
    await env.DB.prepare("UPDATE files SET status = 'processing' WHERE filename = 'shared.txt' AND team_id = ?").bind(w.teamA.id).run();
    expect(await searchKnowledge(env, { teamId: w.teamA.id, agentId: mine, query: "locker code" })).toEqual([]);
  });

  it("ranks the passage with the rarer words first and honours the limit", async () => {
    const w = await createWorld();
    const agentId = await createAgent(w.teamA.sk);
    const filler = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} is about the office and the team and nothing in particular.`);
    await upload(w.teamA.sk, "office.txt", text([...filler.slice(0, 15), "The office parrot is called Captain Flint.", ...filler.slice(15)].join("\n\n")));
    expect((await settled(w.teamA.sk, "office.txt")).status).toBe("ready");
    const [best] = await searchKnowledge(env, { teamId: w.teamA.id, agentId, query: "what is the name of the office parrot" });
    expect(best?.text).toContain("The office parrot is called Captain Flint.");
    expect(await searchKnowledge(env, { teamId: w.teamA.id, agentId, query: "office", limit: 2 })).toHaveLength(2);
    expect(await searchKnowledge(env, { teamId: w.teamA.id, agentId, query: "office parrot", limit: 0 })).toHaveLength(1);
    expect(await searchKnowledge(env, { teamId: w.teamA.id, agentId, query: "submarine" })).toEqual([]);
  });
});

describe("GET /file/search", { timeout: 30_000 }, () => {
  it("searches all the team's files, or what one agent sees", async () => {
    const w = await createWorld();
    const agentId = await createAgent(w.teamA.sk);
    const other = await createAgent(w.teamA.sk, "Other");
    await upload(w.teamA.sk, "shared.txt", text("The wifi password is printed on the fridge."));
    await upload(w.teamA.sk, "other.txt", text("The guest wifi password is changed every Monday."), { agentId: other });
    await settled(w.teamA.sk, "shared.txt");
    await settled(w.teamA.sk, "other.txt");
    const search = async (q: string, key = w.teamA.sk) => {
      const res = await call("GET", `/file/search?${q}`, { key });
      return { status: res.status, body: await res.json() as { passages: Array<{ filename: string; text: string; fileId: string }> } };
    };
    const all = await search("query=wifi+password");
    expect(all.status).toBe(200);
    expect(all.body.passages.map((p) => p.filename).sort()).toEqual(["other.txt", "shared.txt"]);
    const mine = await search(`query=wifi+password&agentId=${agentId}`);
    expect(mine.body.passages.map((p) => p.filename)).toEqual(["shared.txt"]);
    expect((await search("query=wifi&limit=1")).body.passages).toHaveLength(1);
    expect((await search("query=wifi", w.teamB.sk)).body.passages).toEqual([]);
    expect((await search(`query=wifi&agentId=agt_nope`)).status).toBe(404);
    expect((await search("")).status).toBe(400);
  });
});
