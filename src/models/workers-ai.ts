/**
 * Workers AI through the `AI` binding, for agents whose model is "@cf/...". The binding exists
 * only in the production environment (wrangler.toml [env.production.ai]); without it every call is
 * a "config" ProviderError.
 *
 * Request: env.AI.run(model, { messages, tools?, temperature, stream }, { signal }).
 * - With tools offered and the user's message last, the call is NOT streamed: Workers AI models
 *   return tool calls reliably only in the whole response `{ response, tool_calls, usage }`
 *   (the same choice as Cloudflare's workers-ai-provider). The text then arrives as one delta.
 * - Otherwise (answering after tool results, or no tools) it streams: server-sent events
 *   `data: {"response":"..."}` ... `data: [DONE]`, usage in a late event. Events in the OpenAI shape
 *   (`choices[0].delta`), which some models send, are read too.
 * Tool calls in either shape: `{ name, arguments: {...} }` (legacy) or
 * `{ id, type: "function", function: { name, arguments: "<json>" } }`.
 * Failures: binding error -> "upstream" (logged), time limit (MODEL_TIMEOUT_MS) -> "timeout",
 * unexpected shapes -> "malformed".
 */
import { asProviderError, deadline, estimatedUsage, isRecord, modelTimeoutMs, parseArguments } from "./remote";
import { raceAbort, sseJsonEvents } from "./sse";
import { ProviderError } from "./types";
import type { ChatTurn, GenerateRequest, ModelProvider, StreamEvent, ToolCall, ToolSpec, Usage } from "./types";

const PROVIDER = "Workers AI";
/** Workers AI text models stop at 256 tokens unless told otherwise: too short for a quoted answer. */
export const WORKERS_AI_MAX_TOKENS = 1024;

export type WorkersAiOptions = { timeoutMs?: number };

type WireMessage = {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  tool_calls?: { id: string; type: "function"; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
  name?: string;
};

export function toWorkersAiMessages(messages: ChatTurn[]): WireMessage[] {
  return messages.map((m): WireMessage => {
    switch (m.role) {
      case "assistant":
        return m.toolCalls?.length
          ? {
              role: "assistant",
              content: m.content,
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              })),
            }
          : { role: "assistant", content: m.content };
      case "tool":
        return { role: "tool", tool_call_id: m.toolCallId, name: m.name, content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}

function toWorkersAiTools(tools: ToolSpec[]) {
  return tools.map((t) => ({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

function usageOf(raw: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  const input = raw.prompt_tokens;
  const output = raw.completion_tokens;
  if (typeof input !== "number" || typeof output !== "number") return null;
  return { inputTokens: input, outputTokens: output };
}

/** One tool call in either output shape; `index` names it when the model gives no id. */
function toolCallOf(raw: unknown, index: number): ToolCall {
  if (!isRecord(raw)) throw new ProviderError("malformed", `${PROVIDER}: a tool call is not an object`);
  const fn = isRecord(raw.function) ? raw.function : raw;
  const name = fn.name;
  if (typeof name !== "string" || !name) throw new ProviderError("malformed", `${PROVIDER}: a tool call has no name`);
  const id = typeof raw.id === "string" && raw.id ? raw.id : `call_${index}`;
  return { id, name, arguments: parseArguments(fn.arguments, PROVIDER, name) };
}

function* readWhole(raw: unknown, req: GenerateRequest): Generator<StreamEvent> {
  if (!isRecord(raw)) throw new ProviderError("malformed", `${PROVIDER}: the answer is not an object`);
  const response = raw.response;
  let text = "";
  if (typeof response === "string") text = response;
  // Some models put structured output in `response`; hand it on as text rather than drop it.
  else if (isRecord(response)) text = JSON.stringify(response);
  else if (response !== undefined && response !== null) throw new ProviderError("malformed", `${PROVIDER}: "response" is not text`);
  const calls = raw.tool_calls === undefined || raw.tool_calls === null ? [] : raw.tool_calls;
  if (!Array.isArray(calls)) throw new ProviderError("malformed", `${PROVIDER}: "tool_calls" is not an array`);
  if (!text && calls.length === 0) throw new ProviderError("malformed", `${PROVIDER}: the answer has neither text nor tool calls`);
  if (text) yield { type: "text", delta: text };
  for (const [i, c] of calls.entries()) yield { type: "tool_call", call: toolCallOf(c, i) };
  yield { type: "done", usage: usageOf(raw.usage) ?? estimatedUsage(req, text) };
}

type Partial = { id: string; name: string; args: string; whole?: unknown };

async function* readStream(body: ReadableStream<Uint8Array>, req: GenerateRequest, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  let usage: Usage | null = null;
  let text = "";
  let done = false;
  const partials = new Map<number, Partial>();
  const foldCall = (raw: unknown, fallbackIndex: number) => {
    if (!isRecord(raw)) throw new ProviderError("malformed", `${PROVIDER}: a streamed tool call is not an object`);
    const fn = isRecord(raw.function) ? raw.function : raw;
    // Workers AI closes streamed tool calls with an all-null chunk; it carries nothing.
    if (!raw.id && !fn.name && (fn.arguments === undefined || fn.arguments === null || fn.arguments === "")) return;
    const index = typeof raw.index === "number" ? raw.index : fallbackIndex;
    const p = partials.get(index) ?? { id: "", name: "", args: "" };
    if (typeof raw.id === "string" && raw.id) p.id = raw.id;
    if (typeof fn.name === "string" && fn.name) p.name = fn.name;
    if (typeof fn.arguments === "string") p.args += fn.arguments;
    else if (isRecord(fn.arguments)) p.whole = fn.arguments;
    partials.set(index, p);
  };
  for await (const event of sseJsonEvents(body, signal, PROVIDER)) {
    if (event.done) {
      done = true;
      break;
    }
    const { chunk } = event;
    usage = usageOf(chunk.usage) ?? usage;
    let delta = "";
    if (typeof chunk.response === "string") delta = chunk.response;
    if (Array.isArray(chunk.tool_calls)) chunk.tool_calls.forEach((c, i) => foldCall(c, i));
    if (Array.isArray(chunk.choices)) {
      const d = isRecord(chunk.choices[0]) ? chunk.choices[0].delta : undefined;
      if (isRecord(d)) {
        if (typeof d.content === "string") delta += d.content;
        if (Array.isArray(d.tool_calls)) d.tool_calls.forEach((c, i) => foldCall(c, i));
      }
    } else if (chunk.response === undefined && chunk.usage === undefined && chunk.tool_calls === undefined) {
      throw new ProviderError("malformed", `${PROVIDER}: a stream event has no "response"`);
    }
    if (delta) {
      text += delta;
      yield { type: "text", delta };
    }
  }
  if (!done) throw new ProviderError("malformed", `${PROVIDER}: the stream ended without [DONE]`);
  for (const [index, p] of [...partials.entries()].sort(([a], [b]) => a - b)) {
    if (!p.name) throw new ProviderError("malformed", `${PROVIDER}: streamed tool call ${index} has no name`);
    yield {
      type: "tool_call",
      call: { id: p.id || `call_${index}`, name: p.name, arguments: parseArguments(p.whole ?? p.args, PROVIDER, p.name) },
    };
  }
  yield { type: "done", usage: usage ?? estimatedUsage(req, text) };
}

/** The slice of the Ai binding this provider uses (the real binding and test doubles both fit). */
export type AiRunner = {
  run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
};

export function workersAiProvider(env: Env, options: WorkersAiOptions = {}): ModelProvider {
  return {
    async *generate(req: GenerateRequest): AsyncIterable<StreamEvent> {
      const ai = env.AI as unknown as AiRunner | undefined;
      if (!ai || typeof ai.run !== "function") {
        throw new ProviderError(
          "config",
          `Workers AI is not available: the AI binding exists only in the production environment (deploy with \`wrangler deploy --env production\`); use a "local" or "openai:" model elsewhere`,
        );
      }
      const tools = req.tools?.length ? toWorkersAiTools(req.tools) : undefined;
      const last = req.messages[req.messages.length - 1];
      const stream = !(tools && last?.role === "user");
      const limit = deadline(req.signal, modelTimeoutMs(env, options.timeoutMs));
      try {
        const out = await raceAbort(
          ai.run(
            req.model,
            {
              messages: toWorkersAiMessages(req.messages),
              temperature: req.temperature,
              max_tokens: WORKERS_AI_MAX_TOKENS,
              stream,
              ...(tools ? { tools } : {}),
            },
            { signal: limit.signal },
          ),
          limit.signal,
        );
        if (out instanceof ReadableStream) yield* readStream(out as ReadableStream<Uint8Array>, req, limit.signal);
        else if (out instanceof Response && out.body) yield* readStream(out.body, req, limit.signal);
        else yield* readWhole(out, req);
      } catch (err) {
        throw asProviderError(err, { provider: PROVIDER, model: req.model, caller: req.signal, timedOut: limit.timedOut() });
      } finally {
        limit.clear();
      }
    },
  };
}
