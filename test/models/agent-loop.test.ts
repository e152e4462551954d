import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { renderSystemPrompt } from "../../src/agents/prompt";
import { HISTORY_TOKEN_BUDGET, MAX_TOOL_ROUNDS, boundHistory, buildSystemPrompt, runAgentTurn } from "../../src/models/agent-loop";
import { ProviderError } from "../../src/models/provider";
import { KNOWLEDGE_TOOL } from "../../src/models/tools";
import { agent, fakeRequestWith } from "./helpers";

async function turn(a: ReturnType<typeof agent>, userMessage: string, history: { role: "user" | "assistant"; content: string }[] = []) {
  const deltas: string[] = [];
  const result = await runAgentTurn({ env, agent: a, history, userMessage, onDelta: (d) => deltas.push(d) });
  return { ...result, deltas };
}

describe("runAgentTurn with the local model", () => {
  it("searches its knowledge, finds nothing (empty knowledge), and says so plainly", async () => {
    const a = agent({ name: "Shop", description: "Answers questions about the Acme shop.", tools: [KNOWLEDGE_TOOL] });
    const r = await turn(a, "What is your return policy for shoes?");
    expect(r.rounds).toBe(2); // the search round, then the answer
    expect(r.content).toContain("I don't have any information about");
    expect(r.content).toContain("shoes");
    expect(r.citations).toEqual([]);
    expect(r.deltas.length).toBeGreaterThan(1);
    expect(r.deltas.join("")).toBe(r.content);
    expect(r.usage.inputTokens).toBeGreaterThan(0);
    expect(r.usage.outputTokens).toBeGreaterThan(0);
  });

  it("answers from its notes in one round when it has no tools", async () => {
    const a = agent({ name: "Billing", notes: "Refunds take 5 business days. Invoices are sent on the 1st." });
    const r = await turn(a, "When are invoices sent?");
    expect(r.rounds).toBe(1);
    expect(r.content).toBe('From my notes: "Invoices are sent on the 1st."');
  });

  it("greets without searching", async () => {
    const a = agent({ name: "Shop", description: "Answers questions about the Acme shop.", tools: [KNOWLEDGE_TOOL] });
    const r = await turn(a, "hello");
    expect(r.rounds).toBe(1);
    expect(r.content).toBe("Hello! I'm Shop: answers questions about the Acme shop. How can I help you today?");
  });

  it("is deterministic end to end", async () => {
    const a = agent({ name: "Shop", notes: "We open at 9am.", tools: [KNOWLEDGE_TOOL] });
    const one = await turn(a, "When do you open?");
    const two = await turn(a, "When do you open?");
    expect(two).toEqual(one);
  });
});

describe("runAgentTurn with a remote model (fake OpenAI endpoint)", () => {
  it("sends the system prompt (rendered config + name), bounded history and the new message, with the agent's temperature", async () => {
    const a = agent({ name: "Echo", description: "Repeats.", model: "openai:fake-echo", temperature: 0.25 });
    const r = await turn(a, "marker-loop-1", [
      { role: "user", content: "earlier question" },
      { role: "assistant", content: "earlier answer" },
    ]);
    expect(r.content).toBe("You said: marker-loop-1");
    expect(r.rounds).toBe(1);
    expect(r.usage).toEqual({ inputTokens: 42, outputTokens: 3 });
    const [sent] = await fakeRequestWith("fake-echo", "marker-loop-1");
    expect(sent?.body.temperature).toBe(0.25);
    expect(sent?.body.tools).toBeUndefined();
    const messages = sent?.body.messages as { role: string; content: string }[];
    expect(messages[0]?.content.startsWith(renderSystemPrompt(a.config))).toBe(true);
    expect(messages[0]?.content).toContain("# Agent\nName: Echo");
    expect(messages.slice(1)).toEqual([
      { role: "user", content: "earlier question" },
      { role: "assistant", content: "earlier answer" },
      { role: "user", content: "marker-loop-1" },
    ]);
  });

  it("executes the knowledge tool call and feeds the result back", async () => {
    const a = agent({ name: "Tools", model: "openai:fake-tools", tools: [KNOWLEDGE_TOOL] });
    const r = await turn(a, "marker-loop-2 refunds?");
    expect(r.rounds).toBe(2);
    expect(r.content).toBe('Tool said: {"passages":[],"note":"No relevant passages found in the knowledge files."}');
    expect(r.usage.inputTokens).toBe(30 + 42);
    const sent = await fakeRequestWith("fake-tools", "marker-loop-2");
    expect(sent).toHaveLength(2);
    expect(sent[1]?.body.messages.at(-2)).toMatchObject({
      role: "assistant",
      tool_calls: [{ id: "call_a", function: { name: KNOWLEDGE_TOOL, arguments: JSON.stringify({ query: "marker-loop-2 refunds?" }) } }],
    });
    expect(sent[1]?.body.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_a" });
  });

  it("answers an unknown tool name with a tool error instead of crashing", async () => {
    const a = agent({ name: "Tools", model: "openai:fake-unknown-tool", tools: [KNOWLEDGE_TOOL] });
    const r = await turn(a, "marker-loop-3");
    expect(r.content).toContain('Unknown tool \\"NoSuchTool\\"');
    expect(r.rounds).toBe(2);
  });

  it(`stops after ${MAX_TOOL_ROUNDS} tool rounds and asks for a final answer without tools`, async () => {
    const a = agent({ name: "Loop", model: "openai:fake-loop", tools: [KNOWLEDGE_TOOL] });
    const r = await turn(a, "marker-loop-4");
    expect(r.rounds).toBe(MAX_TOOL_ROUNDS + 1);
    expect(r.content).toBe("Final answer.");
    const sent = await fakeRequestWith("fake-loop", "marker-loop-4");
    expect(sent).toHaveLength(MAX_TOOL_ROUNDS + 1);
    expect(sent.slice(0, MAX_TOOL_ROUNDS).every((s) => Array.isArray(s.body.tools))).toBe(true);
    expect(sent.at(-1)?.body.tools).toBeUndefined();
  });

  it("keeps text written before a tool call: content is exactly the deltas", async () => {
    const a = agent({ name: "Pre", model: "openai:fake-preamble", tools: [KNOWLEDGE_TOOL] });
    const r = await turn(a, "marker-loop-5");
    expect(r.content.startsWith("Let me check.\n\nTool said: ")).toBe(true);
    expect(r.deltas.join("")).toBe(r.content);
  });

  it("does not offer tools the loop does not implement", async () => {
    const a = agent({ name: "Echo", model: "openai:fake-echo", tools: ["mcp_not_wired_yet"] });
    await turn(a, "marker-loop-6");
    const [sent] = await fakeRequestWith("fake-echo", "marker-loop-6");
    expect(sent?.body.tools).toBeUndefined();
  });

  it("a provider failure rejects with ProviderError and streams nothing", async () => {
    const a = agent({ name: "Broken", model: "openai:fake-500", tools: [KNOWLEDGE_TOOL] });
    const deltas: string[] = [];
    const err = await runAgentTurn({ env, agent: a, history: [], userMessage: "x", onDelta: (d) => deltas.push(d) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).kind).toBe("upstream");
    expect(deltas).toEqual([]);
  });

  it("Workers AI without the binding -> config ProviderError", async () => {
    const a = agent({ name: "CF", model: "@cf/meta/llama-3.1-8b-instruct" });
    const err = await runAgentTurn({ env, agent: a, history: [], userMessage: "x" }).catch((e: unknown) => e);
    expect((err as ProviderError).kind).toBe("config");
  });
});

describe("history budget", () => {
  const msg = (role: "user" | "assistant", chars: number, tag: string) => ({ role, content: tag + "x".repeat(chars - tag.length) });

  it("drops the oldest messages first and keeps the newest that fit", () => {
    const history = [msg("user", 4000, "u1"), msg("assistant", 4000, "a1"), msg("user", 4000, "u2"), msg("assistant", 4000, "a2")];
    const kept = boundHistory(history, "new question", 2500); // 2,500 tokens ~ 10,000 chars
    expect(kept.map((m) => m.content.slice(0, 2))).toEqual(["u2", "a2"]);
  });

  it("never starts the kept history with an assistant message", () => {
    const history = [msg("user", 4000, "u1"), msg("assistant", 4000, "a1"), msg("user", 4000, "u2"), msg("assistant", 4000, "a2")];
    expect(boundHistory(history, "q", 3100).map((m) => m.content.slice(0, 2))).toEqual(["u2", "a2"]);
  });

  it("keeps the new message even when it alone exceeds the budget", async () => {
    const a = agent({ name: "Echo", model: "openai:fake-echo" });
    const huge = `marker-loop-7 ${"y".repeat(HISTORY_TOKEN_BUDGET * 4 + 100)}`;
    const r = await turn(a, huge, [{ role: "user", content: "old" }]);
    expect(r.content).toBe(`You said: ${huge}`);
    const [sent] = await fakeRequestWith("fake-echo", "marker-loop-7");
    expect((sent?.body.messages as unknown[]).length).toBe(2); // system + the new message
  });

  it("the system prompt names tools only when they are offered", () => {
    const a = agent({ name: "X" });
    expect(buildSystemPrompt(a.config, [])).not.toContain("# Tools");
    expect(buildSystemPrompt(a.config, [KNOWLEDGE_TOOL])).toContain(`# Tools\nUse ${KNOWLEDGE_TOOL}`);
  });
});
