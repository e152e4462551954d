/**
 * Any OpenAI-compatible chat-completions endpoint (OpenAI, Groq, Ollama, vLLM, AI Gateway), for
 * agents whose model is "openai:<model>".
 *
 * Configuration: OPENAI_BASE_URL (var, default https://api.openai.com/v1) and OPENAI_API_KEY
 * (secret: `wrangler secret put OPENAI_API_KEY`; locally in .dev.vars). Without a key the request
 * goes out without Authorization (Ollama, vLLM need none), except to api.openai.com, which is a
 * configuration error.
 *
 * Always `stream: true` with `stream_options.include_usage`: text deltas are passed on as they
 * arrive, tool calls are assembled from their per-index deltas and emitted when the stream ends,
 * usage comes from the final chunk (estimated at ~4 chars/token if the server sends none).
 * Failures: time limit (MODEL_TIMEOUT_MS, default 30 s) -> "timeout"; HTTP 4xx/5xx or a network
 * error -> "upstream" (the upstream body is logged, never returned); unparseable or incomplete
 * stream -> "malformed".
 */
import {
  asProviderError,
  deadline,
  estimatedUsage,
  isRecord,
  modelTimeoutMs,
  parseArguments,
} from "./remote";
import { sseJsonEvents } from "./sse";
import { ProviderError } from "./types";
import type { ChatTurn, GenerateRequest, ModelProvider, StreamEvent, ToolCall, ToolSpec, Usage } from "./types";

/** OPENAI_API_KEY is a secret, so `wrangler types` only knows it when .dev.vars has it: read it as optional. */
type WithKey = Env & { OPENAI_API_KEY?: string };

export const DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1";
const PROVIDER = "OpenAI-compatible";

export type OpenAiOptions = { timeoutMs?: number };

type WireMessage =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: WireToolCall[] }
  | { role: "tool"; tool_call_id: string; content: string };
type WireToolCall = { id: string; type: "function"; function: { name: string; arguments: string } };

export function toOpenAiMessages(messages: ChatTurn[]): WireMessage[] {
  return messages.map((m): WireMessage => {
    switch (m.role) {
      case "assistant":
        return m.toolCalls?.length
          ? {
              role: "assistant",
              content: m.content || null,
              tool_calls: m.toolCalls.map((c) => ({
                id: c.id,
                type: "function",
                function: { name: c.name, arguments: JSON.stringify(c.arguments) },
              })),
            }
          : { role: "assistant", content: m.content };
      case "tool":
        return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}

export function toOpenAiTools(tools: ToolSpec[]) {
  return tools.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: t.parameters } }));
}

function endpoint(env: Env): { url: string; headers: Record<string, string> } {
  const base = (env.OPENAI_BASE_URL ?? "").trim() || DEFAULT_OPENAI_BASE_URL;
  let url: URL;
  try {
    url = new URL(`${base.replace(/\/+$/, "")}/chat/completions`);
  } catch {
    throw new ProviderError("config", "OPENAI_BASE_URL is not a valid URL");
  }
  const key = (env as WithKey).OPENAI_API_KEY?.trim();
  if (!key && url.hostname === "api.openai.com") {
    throw new ProviderError("config", "OPENAI_API_KEY is not set: run `wrangler secret put OPENAI_API_KEY` (locally: .dev.vars)");
  }
  const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
  if (key) headers.authorization = `Bearer ${key}`;
  return { url: url.toString(), headers };
}

function usageOf(raw: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  const input = raw.prompt_tokens;
  const output = raw.completion_tokens;
  if (typeof input !== "number" || typeof output !== "number") return null;
  return { inputTokens: input, outputTokens: output };
}

type Partial = { id: string; name: string; args: string };

/** Folds one streamed `delta.tool_calls` array into the per-index partial calls. */
function foldToolDeltas(partials: Map<number, Partial>, deltas: unknown): void {
  if (!Array.isArray(deltas)) throw new ProviderError("malformed", `${PROVIDER}: delta.tool_calls is not an array`);
  for (const d of deltas) {
    if (!isRecord(d)) throw new ProviderError("malformed", `${PROVIDER}: a tool call delta is not an object`);
    const index = typeof d.index === "number" ? d.index : 0;
    const fn = isRecord(d.function) ? d.function : {};
    const p = partials.get(index) ?? { id: "", name: "", args: "" };
    if (typeof d.id === "string" && d.id) p.id = d.id;
    if (typeof fn.name === "string" && fn.name) p.name += p.name && p.name === fn.name ? "" : fn.name;
    if (typeof fn.arguments === "string") p.args += fn.arguments;
    partials.set(index, p);
  }
}

function finishToolCalls(partials: Map<number, Partial>): ToolCall[] {
  return [...partials.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, p]) => {
      if (!p.name) throw new ProviderError("malformed", `${PROVIDER}: tool call ${index} has no function name`);
      return { id: p.id || `call_${index}`, name: p.name, arguments: parseArguments(p.args, PROVIDER, p.name) };
    });
}

async function* readStream(body: ReadableStream<Uint8Array>, req: GenerateRequest, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  const partials = new Map<number, Partial>();
  let usage: Usage | null = null;
  let text = "";
  let finished = false;
  let done = false;
  for await (const event of sseJsonEvents(body, signal, PROVIDER)) {
    if (event.done) {
      done = true;
      break;
    }
    const { chunk, raw: data } = event;
    if (chunk.error !== undefined) {
      console.error(JSON.stringify({ error: "model stream reported an error", provider: PROVIDER, model: req.model, body: data.slice(0, 1000) }));
      throw new ProviderError("upstream", `${PROVIDER}: the stream reported an error`);
    }
    usage = usageOf(chunk.usage) ?? usage;
    if (!Array.isArray(chunk.choices)) {
      if (chunk.usage === undefined) throw new ProviderError("malformed", `${PROVIDER}: a stream event has no choices`);
      continue;
    }
    for (const choice of chunk.choices) {
      if (!isRecord(choice)) throw new ProviderError("malformed", `${PROVIDER}: a choice is not an object`);
      if (typeof choice.finish_reason === "string") finished = true;
      const delta = choice.delta;
      if (delta === undefined || delta === null) continue;
      if (!isRecord(delta)) throw new ProviderError("malformed", `${PROVIDER}: a delta is not an object`);
      if (typeof delta.content === "string" && delta.content) {
        text += delta.content;
        yield { type: "text", delta: delta.content };
      }
      if (delta.tool_calls !== undefined && delta.tool_calls !== null) foldToolDeltas(partials, delta.tool_calls);
    }
  }
  if (!done && !finished) throw new ProviderError("malformed", `${PROVIDER}: the stream ended before it was complete`);
  for (const call of finishToolCalls(partials)) yield { type: "tool_call", call };
  yield { type: "done", usage: usage ?? estimatedUsage(req, text) };
}

/** A server that ignored `stream: true` and answered with one JSON completion. */
function* readCompletion(raw: unknown, req: GenerateRequest): Generator<StreamEvent> {
  const choice = isRecord(raw) && Array.isArray(raw.choices) ? raw.choices[0] : undefined;
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(message)) throw new ProviderError("malformed", `${PROVIDER}: the completion has no message`);
  const text = typeof message.content === "string" ? message.content : "";
  if (text) yield { type: "text", delta: text };
  if (Array.isArray(message.tool_calls)) {
    const partials = new Map<number, Partial>();
    foldToolDeltas(partials, message.tool_calls.map((c, index) => (isRecord(c) ? { index, ...c } : c)));
    for (const call of finishToolCalls(partials)) yield { type: "tool_call", call };
  }
  yield { type: "done", usage: (isRecord(raw) ? usageOf(raw.usage) : null) ?? estimatedUsage(req, text) };
}

export function openAiProvider(env: Env, options: OpenAiOptions = {}): ModelProvider {
  return {
    async *generate(req: GenerateRequest): AsyncIterable<StreamEvent> {
      const { url, headers } = endpoint(env);
      const model = req.model.startsWith("openai:") ? req.model.slice("openai:".length) : req.model;
      const limit = deadline(req.signal, modelTimeoutMs(env, options.timeoutMs));
      const body = {
        model,
        messages: toOpenAiMessages(req.messages),
        temperature: req.temperature,
        stream: true,
        stream_options: { include_usage: true },
        ...(req.tools?.length ? { tools: toOpenAiTools(req.tools) } : {}),
      };
      try {
        const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: limit.signal });
        if (!res.ok) {
          const detail = await res.text().catch(() => "");
          console.error(JSON.stringify({ error: "model endpoint refused", provider: PROVIDER, model, status: res.status, body: detail.slice(0, 1000) }));
          throw new ProviderError("upstream", `${PROVIDER} endpoint answered HTTP ${res.status}`);
        }
        const type = res.headers.get("content-type") ?? "";
        if (type.includes("application/json")) {
          let raw: unknown;
          try {
            raw = await res.json();
          } catch (err) {
            throw new ProviderError("malformed", `${PROVIDER}: the response is not JSON`, { cause: err });
          }
          yield* readCompletion(raw, req);
          return;
        }
        if (!res.body) throw new ProviderError("malformed", `${PROVIDER}: the response has no body`);
        yield* readStream(res.body, req, limit.signal);
      } catch (err) {
        throw asProviderError(err, { provider: PROVIDER, model, caller: req.signal, timedOut: limit.timedOut() });
      } finally {
        limit.clear();
      }
    },
  };
}
