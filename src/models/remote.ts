/** What the two remote providers share: the time limit and the mapping of failures to ProviderError kinds. */
import { estimateTokens } from "./text";
import { ProviderError } from "./types";
import type { GenerateRequest, Usage } from "./types";

/** Default bound of one remote model call, request and whole stream (MODEL_TIMEOUT_MS overrides). */
export const DEFAULT_MODEL_TIMEOUT_MS = 30_000;

export function modelTimeoutMs(env: Env, override?: number): number {
  if (override && override > 0) return override;
  const fromEnv = Number(env.MODEL_TIMEOUT_MS);
  return Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : DEFAULT_MODEL_TIMEOUT_MS;
}

/**
 * A signal that fires on the caller's abort or after `ms`; `timedOut()` tells which. The timer is
 * ours to clear (`clear()` in a finally): AbortSignal.timeout would keep a Durable Object busy
 * for its whole span after the call ended.
 */
export function deadline(
  caller: AbortSignal | undefined,
  ms: number,
): { signal: AbortSignal; timedOut: () => boolean; clear: () => void } {
  const timer = new AbortController();
  const handle = setTimeout(() => timer.abort(new DOMException("The model did not answer in time", "TimeoutError")), ms);
  const signal = caller ? AbortSignal.any([caller, timer.signal]) : timer.signal;
  return {
    signal,
    timedOut: () => timer.signal.aborted && !caller?.aborted,
    clear: () => clearTimeout(handle),
  };
}

/** Any failure during a remote call, as the error the caller should see. Logs what clients must not see. */
export function asProviderError(
  err: unknown,
  ctx: { provider: string; model: string; timedOut: boolean; caller?: AbortSignal },
): unknown {
  if (err instanceof ProviderError) return err;
  if (ctx.caller?.aborted) return ctx.caller.reason ?? err;
  if (ctx.timedOut) return new ProviderError("timeout", `${ctx.provider} model ${ctx.model} did not answer in time`, { cause: err });
  console.error(JSON.stringify({ error: "model call failed", provider: ctx.provider, model: ctx.model, cause: String(err) }));
  return new ProviderError("upstream", `${ctx.provider} model ${ctx.model} failed`, { cause: err });
}

/** Usage when the provider reports none: the same ~4 characters per token estimate as the local model. */
export function estimatedUsage(req: GenerateRequest, output: string): Usage {
  const input = req.messages.map((m) => m.content).join("\n");
  return { inputTokens: estimateTokens(input), outputTokens: estimateTokens(output) };
}

/** Tool-call arguments arrive as a JSON string (OpenAI) or an object (Workers AI legacy shape). */
export function parseArguments(raw: unknown, provider: string, name: string): Record<string, unknown> {
  let value = raw;
  if (typeof raw === "string") {
    if (raw.trim() === "") return {};
    try {
      value = JSON.parse(raw);
    } catch (err) {
      throw new ProviderError("malformed", `${provider}: arguments of tool call ${name} are not valid JSON`, { cause: err });
    }
  }
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw new ProviderError("malformed", `${provider}: arguments of tool call ${name} are not an object`);
  }
  return value as Record<string, unknown>;
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
