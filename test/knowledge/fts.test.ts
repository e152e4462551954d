import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { queryTerms, toFtsQuery } from "../../src/knowledge/fts";
import { searchKnowledge } from "../../src/knowledge/search";
import { createWorld } from "../helpers/world";
import { createAgent, settled, text, upload } from "./helpers";

describe("FTS query sanitising", () => {
  it("quotes terms, ORs them and drops stopwords", () => {
    expect(toFtsQuery("How long does standard shipping take?")).toBe('"long" OR "standard" OR "shipping" OR "take"');
    expect(queryTerms("What's the E03 error code's meaning?")).toEqual(["e03", "error", "code", "meaning"]);
    expect(toFtsQuery("Ünïcödé Größe")).toBe('"ünïcödé" OR "größe"');
  });

  it("keeps stopwords when nothing else is left, and gives null for no words", () => {
    expect(toFtsQuery("what is it")).toBe('"what" OR "is" OR "it"');
    expect(toFtsQuery("?!... ---")).toBeNull();
    expect(toFtsQuery("")).toBeNull();
  });

  it("never lets FTS5 syntax through", async () => {
    const w = await createWorld();
    const agentId = await createAgent(w.teamA.sk);
    await upload(w.teamA.sk, "ops.txt", text("Deploy with NEAR zero downtime. The AND gate, the OR gate and NOT gate. Column text: value."));
    expect((await settled(w.teamA.sk, "ops.txt")).status).toBe("ready");
    const nasty = [
      'deploy" OR "x',
      "NEAR(deploy downtime, 2)",
      "text : deploy",
      "team_id : anything",
      "deploy*",
      "^deploy",
      "(((deploy",
      'AND OR NOT "',
      "{text team_id}: deploy",
      "'; DROP TABLE files; --",
      "-deploy +downtime",
      "deploy\u0000downtime",
    ];
    for (const query of nasty) {
      const passages = await searchKnowledge(env, { teamId: w.teamA.id, agentId, query });
      expect(Array.isArray(passages), query).toBe(true);
    }
    expect((await searchKnowledge(env, { teamId: w.teamA.id, agentId, query: "NEAR(deploy downtime, 2)" }))[0]?.filename).toBe("ops.txt");
  }, 30_000);
});
