import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { DEFAULT_ROUTING_PROMPT } from "../../src/agents/prompt";
import { call, createWorld, json } from "../helpers/world";
import { createAgent, putAgent } from "./helpers";

describe("agents: create, read, list, update, delete", () => {
  it("creates an agent with defaults and shows its whole configuration and rendered prompt", async () => {
    const w = await createWorld();
    const res = await call("POST", "/agent", {
      key: w.teamA.sk,
      body: {
        name: "Billing",
        description: "Answers billing questions.",
        systemPrompt: "You are a billing assistant.",
        notes: "Refunds take 5 days.",
        actions: ["Greet the user", "Ask for the invoice number"],
        tools: ["AgentKnowledgeTool"],
      },
    });
    expect(res.status).toBe(200);
    const created = await json(res);
    expect(created).toMatchObject({ name: "Billing", description: "Answers billing questions.", teamId: w.teamA.id });
    expect(created.id).toMatch(/^agt_/);
    expect(Object.keys(created)).toEqual(expect.arrayContaining(["id", "name", "description", "teamId", "createdAt"]));
    expect(new Date(created.createdAt).toISOString()).toBe(created.createdAt);

    const detail = await json(await call("GET", `/agent/${created.id}`, { key: w.teamA.sk }));
    expect(detail).toMatchObject({
      id: created.id,
      name: "Billing",
      systemPrompt: "You are a billing assistant.",
      model: "local:default",
      temperature: 0.7,
      tools: ["AgentKnowledgeTool"],
      type: "specialist",
      subAgents: [],
      routing: null,
      version: 1,
      latestVersion: 1,
      createdAt: created.createdAt,
      rolledBackAt: null,
    });
    expect(detail.renderedPrompt).toBe(
      "# Instructions\nYou are a billing assistant.\n\n# Description\nAnswers billing questions.\n\n" +
        "# Notes\nRefunds take 5 days.\n\n# Actions\n1. Greet the user\n2. Ask for the invoice number",
    );
    expect(detail.renderedRoutingPrompt).toBeUndefined();
  });

  it("accepts every model form of the catalogue", async () => {
    const w = await createWorld();
    for (const model of ["local", "local:default", "@cf/meta/llama-3.1-8b-instruct", "openai:gpt-4o-mini"]) {
      const a = await createAgent(w.teamA.sk, { model });
      expect((await json(await call("GET", `/agent/${a.id}`, { key: w.teamA.sk }))).model).toBe(model);
    }
  });

  it("lists the team's agents at /agent and /agents, oldest first, filterable by type", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { name: "One" });
    const b = await createAgent(w.teamA.sk, { name: "Two" });
    const sup = await createAgent(w.teamA.sk, { name: "Boss", type: "supervisor", subAgents: [a.id] });
    await createAgent(w.teamB.sk, { name: "Other team" });
    for (const path of ["/agent", "/agents"]) {
      const res = await call("GET", path, { key: w.teamA.sk });
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.agents.map((x: { id: string }) => x.id)).toEqual([a.id, b.id, sup.id]);
      expect(body.agents[0]).toEqual({ id: a.id, name: "One", description: "", type: "specialist", createdAt: a.createdAt });
    }
    const supervisors = await json(await call("GET", "/agent?type=supervisor", { key: w.teamA.sk }));
    expect(supervisors.agents.map((x: { id: string }) => x.id)).toEqual([sup.id]);
  });

  it("updates partially: fields present replace, the others stay", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { description: "d1", tools: ["AgentKnowledgeTool"], temperature: 0.2 });
    const res = await putAgent(w.teamA.sk, a.id, { name: "Renamed", temperature: 1 });
    expect(res.status).toBe(200);
    const updated = await json(res);
    expect(updated).toMatchObject({ id: a.id, name: "Renamed", version: 2 });
    expect(updated.updatedAt >= a.createdAt).toBe(true);
    const detail = await json(await call("GET", `/agent/${a.id}`, { key: w.teamA.sk }));
    expect(detail).toMatchObject({ name: "Renamed", temperature: 1, description: "d1", tools: ["AgentKnowledgeTool"] });
    expect(detail.updatedAt).toBe(updated.updatedAt);
    // A full body is accepted too (PUT "body as for create").
    const full = await putAgent(w.teamA.sk, a.id, { name: "Full", description: "", systemPrompt: "x", model: "local", temperature: 0, tools: [] });
    expect(full.status).toBe(200);
    expect(await json(await call("GET", `/agent/${a.id}`, { key: w.teamA.sk }))).toMatchObject({
      name: "Full",
      description: "",
      tools: [],
      temperature: 0,
    });
  });

  it("answers 404 for an unknown agent on every route", async () => {
    const w = await createWorld();
    for (const [method, path, body] of [
      ["GET", "/agent/agt_nope", undefined],
      ["PUT", "/agent/agt_nope", { name: "x" }],
      ["DELETE", "/agent/agt_nope", undefined],
      ["PUT", "/agent/agt_nope/rollback", undefined],
      ["GET", "/agent/agt_nope/versions", undefined],
      ["GET", "/agent/agt_nope/versions/1", undefined],
    ] as const) {
      const res = await call(method, path, { key: w.teamA.sk, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await json(res)).toEqual({ error: "Not Found", message: "Agent not found." });
    }
  });

  it("deletes an agent with its versions (204), after which it is 404", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    await putAgent(w.teamA.sk, a.id, { description: "v2" });
    const res = await call("DELETE", `/agent/${a.id}`, { key: w.teamA.sk });
    expect(res.status).toBe(204);
    expect(await res.text()).toBe("");
    expect((await call("GET", `/agent/${a.id}`, { key: w.teamA.sk })).status).toBe(404);
    expect((await call("GET", `/agent/${a.id}/versions`, { key: w.teamA.sk })).status).toBe(404);
    expect((await call("DELETE", `/agent/${a.id}`, { key: w.teamA.sk })).status).toBe(404);
    const left = await env.DB.prepare("SELECT count(*) AS n FROM agent_versions WHERE agent_id = ?").bind(a.id).first<{ n: number }>();
    expect(left?.n).toBe(0);
  });
});

describe("agents: supervisors", () => {
  it("stores sub-agents and renders the routing prompt with the customisation around the default", async () => {
    const w = await createWorld();
    const billing = await createAgent(w.teamA.sk, { name: "Billing", description: "Invoices", notes: "EU only" });
    const tech = await createAgent(w.teamA.sk, { name: "Tech", description: "Bugs" });
    const sup = await createAgent(w.teamA.sk, {
      name: "Front desk",
      type: "supervisor",
      subAgents: [billing.id, tech.id],
      routing: { before: "Our customers are shops.", after: "Prefer Billing when unsure." },
    });
    const detail = await json(await call("GET", `/agent/${sup.id}`, { key: w.teamA.sk }));
    expect(detail).toMatchObject({ type: "supervisor", subAgents: [billing.id, tech.id] });
    const prompt: string = detail.renderedRoutingPrompt;
    const at = (s: string) => prompt.indexOf(s);
    expect(at("Our customers are shops.")).toBe(0);
    expect(at(DEFAULT_ROUTING_PROMPT)).toBeGreaterThan(0);
    expect(at(`id: ${billing.id}`)).toBeGreaterThan(at(DEFAULT_ROUTING_PROMPT));
    expect(at(`id: ${tech.id}`)).toBeGreaterThan(at(`id: ${billing.id}`));
    expect(prompt).toContain("notes: EU only");
    expect(prompt.endsWith("Prefer Billing when unsure.")).toBe(true);

    // Without customisation the default is still there, alone.
    const plain = await createAgent(w.teamA.sk, { type: "supervisor", subAgents: [tech.id] });
    const plainPrompt: string = (await json(await call("GET", `/agent/${plain.id}`, { key: w.teamA.sk }))).renderedRoutingPrompt;
    expect(plainPrompt.startsWith(DEFAULT_ROUTING_PROMPT)).toBe(true);
  });

  it("shows only the remaining sub-agents after one is deleted, and an update drops the deleted one", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk, { name: "A" });
    const b = await createAgent(w.teamA.sk, { name: "B" });
    const sup = await createAgent(w.teamA.sk, { type: "supervisor", subAgents: [a.id, b.id] });
    expect((await call("DELETE", `/agent/${a.id}`, { key: w.teamA.sk })).status).toBe(204);
    const detail = await json(await call("GET", `/agent/${sup.id}`, { key: w.teamA.sk }));
    expect(detail.subAgents).toEqual([b.id]);
    expect(detail.renderedRoutingPrompt).not.toContain(a.id);

    const res = await putAgent(w.teamA.sk, sup.id, { temperature: 0.1 });
    expect(res.status).toBe(200);
    const v2 = await json(await call("GET", `/agent/${sup.id}/versions/2`, { key: w.teamA.sk }));
    expect(v2.config.subAgents).toEqual([b.id]);
    expect(v2.changes).toEqual(["temperature", "subAgents"]);

    // With none left, an update must name new sub-agents.
    await call("DELETE", `/agent/${b.id}`, { key: w.teamA.sk });
    expect((await json(await call("GET", `/agent/${sup.id}`, { key: w.teamA.sk }))).subAgents).toEqual([]);
    expect((await putAgent(w.teamA.sk, sup.id, { temperature: 0.2 })).status).toBe(400);
  });

  it("turns a supervisor into a specialist, dropping its sub-agents and routing", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    const sup = await createAgent(w.teamA.sk, { type: "supervisor", subAgents: [a.id], routing: { before: "x" } });
    expect((await putAgent(w.teamA.sk, sup.id, { type: "specialist" })).status).toBe(200);
    const detail = await json(await call("GET", `/agent/${sup.id}`, { key: w.teamA.sk }));
    expect(detail).toMatchObject({ type: "specialist", subAgents: [], routing: null });
    expect(detail.renderedRoutingPrompt).toBeUndefined();
  });

  it("refuses to make a supervisor of an agent that is another supervisor's sub-agent", async () => {
    const w = await createWorld();
    const a = await createAgent(w.teamA.sk);
    const b = await createAgent(w.teamA.sk);
    const sup = await createAgent(w.teamA.sk, { type: "supervisor", subAgents: [a.id] });
    const res = await putAgent(w.teamA.sk, a.id, { type: "supervisor", subAgents: [b.id] });
    const body = await json(res);
    expect(res.status).toBe(400);
    expect(body.message).toContain("type");
    expect(body.message).toContain(sup.id);
  });
});
