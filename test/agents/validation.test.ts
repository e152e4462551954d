import { describe, expect, it } from "vitest";
import { LIMITS } from "../../src/agents/schemas";
import { call, createWorld, json } from "../helpers/world";
import { createAgent, expectBadRequest, putAgent } from "./helpers";

describe("agents: validation (400 naming the field)", () => {
  it("rejects each invalid field on create", async () => {
    const w = await createWorld();
    const post = (body: Record<string, unknown>) => call("POST", "/agent", { key: w.teamA.sk, body: { name: "Ok", ...body } });

    await expectBadRequest(await call("POST", "/agent", { key: w.teamA.sk, body: { description: "no name" } }), "name");
    await expectBadRequest(await post({ name: "" }), "name");
    await expectBadRequest(await post({ name: "   " }), "name");
    await expectBadRequest(await post({ name: "x".repeat(LIMITS.name + 1) }), "name");
    await expectBadRequest(await post({ name: 42 }), "name");
    await expectBadRequest(await post({ description: "x".repeat(LIMITS.description + 1) }), "description");
    await expectBadRequest(await post({ description: ["a"] }), "description");
    await expectBadRequest(await post({ systemPrompt: "x".repeat(LIMITS.systemPrompt + 1) }), "systemPrompt");
    await expectBadRequest(await post({ systemPrompt: 1 }), "systemPrompt");
    await expectBadRequest(await post({ notes: "x".repeat(LIMITS.notes + 1) }), "notes");
    await expectBadRequest(await post({ actions: "do it" }), "actions");
    await expectBadRequest(await post({ actions: [""] }), "actions");
    await expectBadRequest(await post({ actions: ["x".repeat(LIMITS.action + 1)] }), "actions");
    await expectBadRequest(await post({ actions: Array.from({ length: LIMITS.actions + 1 }, () => "a") }), "actions");
    await expectBadRequest(await post({ temperature: -0.01 }), "temperature");
    await expectBadRequest(await post({ temperature: 1.01 }), "temperature");
    await expectBadRequest(await post({ temperature: "0.5" }), "temperature");
    await expectBadRequest(await post({ type: "manager" }), "type");
    await expectBadRequest(await post({ tools: "AgentKnowledgeTool" }), "tools");
    await expectBadRequest(await post({ tools: ["AgentKnowledgeTool", "AgentKnowledgeTool"] }), "tools");
    await expectBadRequest(await post({ subAgents: "agt_x" }), "subAgents");
    await expectBadRequest(await post({ routing: "route well" }), "routing");
    await expectBadRequest(await post({ routing: { instead: "x" } }), "routing");
    await expectBadRequest(await post({ routing: { before: "x".repeat(LIMITS.routingText + 1) } }), "routing");
    await expectBadRequest(await post({ colour: "red" }), "colour");
  });

  it("names the accepted model forms for an unknown model", async () => {
    const w = await createWorld();
    for (const model of ["gpt-4", "anthropic:claude", "local:big", "@cf/", "openai:", 7, ""]) {
      const body = await expectBadRequest(await call("POST", "/agent", { key: w.teamA.sk, body: { name: "x", model } }), "model");
      if (typeof model === "string") {
        expect(body.message).toContain('"local"');
        expect(body.message).toContain("@cf/");
        expect(body.message).toContain("openai:");
      }
    }
  });

  it("rejects unknown tools, listing the known ones", async () => {
    const w = await createWorld();
    const body = await expectBadRequest(
      await call("POST", "/agent", { key: w.teamA.sk, body: { name: "x", tools: ["AgentKnowledgeTool", "WebSearch"] } }),
      "tools.1",
    );
    expect(body.message).toContain("WebSearch");
    expect(body.message).toContain("AgentKnowledgeTool");
  });

  it("checks the type, subAgents and routing combination and every sub-agent id", async () => {
    const w = await createWorld();
    const spec = await createAgent(w.teamA.sk, { name: "Spec" });
    const sup = await createAgent(w.teamA.sk, { type: "supervisor", subAgents: [spec.id] });
    const foreign = await createAgent(w.teamB.sk, { name: "Theirs" });
    const post = (body: Record<string, unknown>) => call("POST", "/agent", { key: w.teamA.sk, body: { name: "S", ...body } });

    await expectBadRequest(await post({ subAgents: [spec.id] }), "subAgents"); // specialist with sub-agents
    await expectBadRequest(await post({ routing: { before: "x" } }), "routing"); // specialist with routing
    await expectBadRequest(await post({ type: "supervisor" }), "subAgents");
    await expectBadRequest(await post({ type: "supervisor", subAgents: [] }), "subAgents");
    const missing = await expectBadRequest(await post({ type: "supervisor", subAgents: [spec.id, "agt_missing"] }), "subAgents.1");
    expect(missing.message).toContain("agt_missing");
    await expectBadRequest(await post({ type: "supervisor", subAgents: [foreign.id] }), "subAgents.0");
    const nested = await expectBadRequest(await post({ type: "supervisor", subAgents: [sup.id] }), "subAgents.0");
    expect(nested.message).toContain("supervisor");
    await expectBadRequest(await post({ type: "supervisor", subAgents: [spec.id, spec.id] }), "subAgents.1");
    await expectBadRequest(
      await post({ type: "supervisor", subAgents: Array.from({ length: LIMITS.subAgents + 1 }, () => spec.id) }),
      "subAgents",
    );
    // A supervisor among its own sub-agents.
    const self = await expectBadRequest(await putAgent(w.teamA.sk, sup.id, { subAgents: [spec.id, sup.id] }), "subAgents.1");
    expect(self.message).toContain("own sub-agent");
    // Nothing of the above was stored.
    expect((await json(await call("GET", "/agent", { key: w.teamA.sk }))).agents).toHaveLength(2);
  });

  it("validates updates like creates and leaves the agent unchanged on a 400", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { temperature: 0.3 });
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, { temperature: 2 }), "temperature");
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, { model: "mystery:model" }), "model");
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, { tools: ["Nope"] }), "tools.0");
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, { name: "" }), "name");
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, { subAgents: [a.id] }), "subAgents");
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, { type: "supervisor" }), "subAgents");
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, { unknown: true }), "unknown");
    await expectBadRequest(await putAgent(w.teamA.sk, a.id, {}), "body");
    const detail = await json(await call("GET", `/agent/${a.id}`, { key: w.teamA.sk }));
    expect(detail).toMatchObject({ version: 1, latestVersion: 1, temperature: 0.3 });
  });

  it("rejects a missing or non-JSON body and a bad version number", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    expect((await call("POST", "/agent", { key: w.teamA.sk })).status).toBe(400);
    expect((await call("POST", "/agent", { key: w.teamA.sk, body: "{nope" })).status).toBe(400);
    expect((await call("PUT", `/agent/${a.id}`, { key: w.teamA.sk })).status).toBe(400);
    for (const n of ["0", "-1", "abc", "1.5"]) {
      await expectBadRequest(await call("GET", `/agent/${a.id}/versions/${n}`, { key: w.teamA.sk }), "n");
    }
  });
});
