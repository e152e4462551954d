import { env } from "cloudflare:workers";
import type { AgentConfig } from "../../src/db/schema";
import type { AgentRef } from "../../src/models/agent-loop";
import type { GenerateRequest, ModelProvider, StreamEvent, ToolCall, Usage } from "../../src/models/provider";

export function config(overrides: Partial<AgentConfig> = {}): AgentConfig {
  return {
    name: "Helper",
    description: "",
    systemPrompt: "",
    notes: "",
    actions: [],
    model: "local",
    temperature: 0.7,
    tools: [],
    type: "specialist",
    subAgents: [],
    routing: null,
    ...overrides,
  };
}

let seq = 0;
export function agent(overrides: Partial<AgentConfig> = {}, id?: string): AgentRef {
  seq += 1;
  return { id: id ?? `agent_test_${seq}`, teamId: `team_models_${seq}`, config: config(overrides) };
}

export type Collected = { text: string; deltas: string[]; toolCalls: ToolCall[]; usage: Usage | null; events: StreamEvent[] };

export async function collect(provider: ModelProvider, req: GenerateRequest): Promise<Collected> {
  const out: Collected = { text: "", deltas: [], toolCalls: [], usage: null, events: [] };
  for await (const ev of provider.generate(req)) {
    out.events.push(ev);
    if (ev.type === "text") {
      out.deltas.push(ev.delta);
      out.text += ev.delta;
    } else if (ev.type === "tool_call") out.toolCalls.push(ev.call);
    else out.usage = ev.usage;
  }
  return out;
}

/** Requests the fake OpenAI endpoint received for a model (test/global/fake-openai.ts). */
export async function fakeRequests(model: string): Promise<{ body: Record<string, any>; authorization: string | null }[]> {
  const base = env.OPENAI_BASE_URL.replace(/\/v1$/, "");
  const res = await fetch(`${base}/__requests?model=${encodeURIComponent(model)}`);
  return (await res.json()) as { body: Record<string, any>; authorization: string | null }[];
}

/** The request whose last user message contains `marker` (tests run in parallel against one fake). */
export async function fakeRequestWith(model: string, marker: string) {
  const all = await fakeRequests(model);
  return all.filter((r) =>
    (r.body.messages as { role: string; content: string | null }[]).some((m) => m.role === "user" && m.content?.includes(marker)),
  );
}
