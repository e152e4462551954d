/**
 * One agent turn (runAgentTurn) and supervisor routing (routeMessage), over any provider.
 *
 * Turn:
 * 1. System prompt: renderSystemPrompt(config) + an "# Agent" section with the agent's name
 *    (+ a "# Tools" hint when tools are offered).
 * 2. History bounded by HISTORY_TOKEN_BUDGET (~4 chars/token): oldest messages dropped first; the
 *    new user message is always kept.
 * 3. Tools: config.tools that the loop implements (AgentKnowledgeTool -> searchKnowledge); other
 *    names (e.g. MCP ids not wired yet) are not offered.
 * 4. Up to MAX_TOOL_ROUNDS model calls with tools; each round's tool calls run and their results go
 *    back to the model. If the model still wants tools after that, one last call is made without
 *    tools for the final answer. An unknown tool name gets an error result, not a crash.
 * 5. onDelta sees every text delta the model writes, in order; the returned content is exactly
 *    their concatenation (text a model writes before calling a tool, "Let me check.", is part of
 *    it; rounds are separated by a blank line).
 * Provider failures propagate as ProviderError; nothing is returned half-done.
 */
import { renderRoutingPrompt, renderSystemPrompt } from "../agents/prompt";
import type { AgentConfig } from "../db/schema";
import type { KnowledgePassage } from "../knowledge/search";
import { parseModel } from "./catalog";
import { routeLexically } from "./local-router";
import { providerFor } from "./provider";
import { estimateTokens } from "./text";
import { encodeToolError, toolsFor } from "./tools";
import { ProviderError } from "./types";
import type { ChatTurn, ToolCall, Usage } from "./types";

export type Citation = { fileId: string; filename: string; passage: string };
export type AgentTurnResult = { content: string; usage: Usage; citations: Citation[]; rounds: number };
export type AgentRef = { id: string; teamId: string; config: AgentConfig };

export type AgentTurnOptions = {
  env: Env;
  agent: AgentRef;
  /** Prior messages, oldest first, NOT including the new one. */
  history: { role: "user" | "assistant"; content: string }[];
  userMessage: string;
  onDelta?: (text: string) => void;
  signal?: AbortSignal;
};

export type RouteOptions = { env: Env; supervisor: AgentRef; subAgents: AgentRef[]; userMessage: string };
export type RouteDecision = { agentId: string; reason: string; fallback: boolean };

/** Tokens of conversation (history + new message) sent to the model; the system prompt is extra. */
export const HISTORY_TOKEN_BUDGET = 6_000;
/** Model calls that may use tools in one turn; one more call without tools may follow. */
export const MAX_TOOL_ROUNDS = 4;

/** The system prompt the model sees for an agent. */
export function buildSystemPrompt(config: AgentConfig, toolNames: string[]): string {
  const parts = [renderSystemPrompt(config), `# Agent\nName: ${config.name}`];
  if (toolNames.length) {
    parts.push(
      `# Tools\nUse ${toolNames.join(", ")} to look up facts before answering questions. ` +
        "Answer from what it returns, quote the relevant passage and name the file; if it finds nothing relevant, say so plainly.",
    );
  }
  return parts.join("\n\n");
}

/** The most recent history that fits the budget together with the new message (which always stays). */
export function boundHistory(
  history: { role: "user" | "assistant"; content: string }[],
  userMessage: string,
  budget = HISTORY_TOKEN_BUDGET,
): { role: "user" | "assistant"; content: string }[] {
  let used = estimateTokens(userMessage);
  let start = history.length;
  while (start > 0) {
    const cost = estimateTokens((history[start - 1] as { content: string }).content);
    if (used + cost > budget) break;
    used += cost;
    start--;
  }
  const kept = history.slice(start);
  // A transcript that opens with an assistant reply confuses some chat templates: drop it.
  while (kept[0]?.role === "assistant") kept.shift();
  return kept;
}

export async function runAgentTurn(opts: AgentTurnOptions): Promise<AgentTurnResult> {
  const { env, agent, signal } = opts;
  const config = agent.config;
  const provider = providerFor(env, config.model);
  const tools = toolsFor(config.tools);
  const messages: ChatTurn[] = [
    { role: "system", content: buildSystemPrompt(config, tools.map((t) => t.spec.name)) },
    ...boundHistory(opts.history, opts.userMessage),
    { role: "user", content: opts.userMessage },
  ];
  const usage: Usage = { inputTokens: 0, outputTokens: 0 };
  const citations: Citation[] = [];
  let content = "";
  let rounds = 0;

  const emit = (delta: string) => {
    content += delta;
    opts.onDelta?.(delta);
  };

  for (;;) {
    const offerTools = tools.length > 0 && rounds < MAX_TOOL_ROUNDS;
    rounds++;
    let roundText = "";
    const calls: ToolCall[] = [];
    let sawDone = false;
    for await (const ev of provider.generate({
      model: config.model,
      messages,
      tools: offerTools ? tools.map((t) => t.spec) : undefined,
      temperature: config.temperature,
      signal,
    })) {
      if (ev.type === "text") {
        if (!ev.delta) continue;
        if (!roundText && content) emit("\n\n");
        roundText += ev.delta;
        emit(ev.delta);
      } else if (ev.type === "tool_call") {
        calls.push(ev.call);
      } else {
        usage.inputTokens += ev.usage.inputTokens;
        usage.outputTokens += ev.usage.outputTokens;
        sawDone = true;
      }
    }
    if (!sawDone) throw new ProviderError("malformed", `model ${config.model} ended without finishing`);
    // Without tools on offer a tool call cannot be honoured: the text is the answer.
    if (calls.length === 0 || !offerTools) break;

    messages.push({ role: "assistant", content: roundText, toolCalls: calls });
    for (const call of calls) {
      const impl = tools.find((t) => t.spec.name === call.name);
      let result: string;
      if (!impl) {
        result = encodeToolError(`Unknown tool "${call.name}". Available tools: ${tools.map((t) => t.spec.name).join(", ")}.`);
      } else {
        try {
          const run = await impl.run({ env, teamId: agent.teamId, agentId: agent.id }, call.arguments);
          result = run.content;
          addCitations(citations, run.passages);
        } catch (err) {
          console.error(JSON.stringify({ error: "tool failed", tool: call.name, agentId: agent.id, cause: String(err) }));
          result = encodeToolError(`The tool ${call.name} failed; answer without it.`);
        }
      }
      messages.push({ role: "tool", toolCallId: call.id, name: call.name, content: result });
    }
  }

  if (!content.trim()) throw new ProviderError("malformed", `model ${config.model} gave an empty answer`);
  return { content, usage, citations, rounds };
}

function addCitations(into: Citation[], passages: KnowledgePassage[]): void {
  for (const p of passages) {
    if (!into.some((c) => c.fileId === p.fileId && c.passage === p.text)) {
      into.push({ fileId: p.fileId, filename: p.filename, passage: p.text });
    }
  }
}

/**
 * Which sub-agent answers a message.
 * - Local supervisor model: the lexical router (local-router.ts), fallback false when it found a
 *   signal.
 * - Remote supervisor model: renderRoutingPrompt + the message, temperature 0. The answer is
 *   matched to a sub-agent by id (exact, or the only id it mentions), then by exact name
 *   (case-insensitive). An answer naming none, or a provider failure (logged), falls back.
 * - Fallback (fallback: true): the lexical router's choice, or with no signal at all the first
 *   sub-agent in the supervisor's list. Without sub-agents the supervisor answers itself.
 * Never throws for a model's answer or failure.
 */
export async function routeMessage(opts: RouteOptions): Promise<RouteDecision> {
  const { supervisor, subAgents, userMessage } = opts;
  const first = subAgents[0];
  if (!first) return { agentId: supervisor.id, reason: "the supervisor has no sub-agents and answers itself", fallback: true };
  if (subAgents.length === 1) return { agentId: first.id, reason: "the only sub-agent", fallback: false };

  const summaries = subAgents.map((a) => ({
    id: a.id,
    name: a.config.name,
    description: a.config.description,
    notes: a.config.notes,
  }));
  const lexical = routeLexically(userMessage, summaries);
  const fallback = (why: string): RouteDecision =>
    lexical
      ? { agentId: lexical.id, reason: `${why}; lexical choice: ${lexical.reason}`, fallback: true }
      : { agentId: first.id, reason: `${why}; no match, first sub-agent`, fallback: true };

  if (parseModel(supervisor.config.model)?.provider === "local") {
    return lexical ? { agentId: lexical.id, reason: lexical.reason, fallback: false } : fallback("local routing");
  }

  let answer = "";
  try {
    const provider = providerFor(opts.env, supervisor.config.model);
    for await (const ev of provider.generate({
      model: supervisor.config.model,
      messages: [
        { role: "system", content: renderRoutingPrompt(supervisor.config, summaries) },
        { role: "user", content: userMessage },
      ],
      temperature: 0,
    })) {
      if (ev.type === "text") answer += ev.delta;
    }
  } catch (err) {
    console.error(JSON.stringify({ error: "routing model failed; falling back", supervisorId: supervisor.id, cause: String(err) }));
    return fallback("the routing model failed");
  }

  const picked = matchSubAgent(answer, summaries);
  if (picked) return { agentId: picked, reason: `the routing model chose ${picked}`, fallback: false };
  console.error(JSON.stringify({ error: "routing answer named no sub-agent; falling back", supervisorId: supervisor.id, answer: answer.slice(0, 200) }));
  return fallback("the routing model named no sub-agent");
}

/** A sub-agent id from a routing model's answer: exact id, the only id mentioned, or an exact name. */
export function matchSubAgent(answer: string, candidates: { id: string; name: string }[]): string | null {
  const cleaned = answer
    .trim()
    .replace(/^[`'"*\s]+|[`'"*.\s]+$/g, "")
    .replace(/^id:\s*/i, "");
  const exact = candidates.find((c) => c.id === cleaned);
  if (exact) return exact.id;
  const mentioned = candidates.filter((c) => answer.includes(c.id));
  // Longest ids first would still be ambiguous if one id contains another; require exactly one.
  if (mentioned.length === 1) return (mentioned[0] as { id: string }).id;
  const byName = candidates.filter((c) => c.name.trim().toLowerCase() === cleaned.toLowerCase());
  return byName.length === 1 ? (byName[0] as { id: string }).id : null;
}
