import { sign } from "./signature";
import { DnsLookupError, urlPolicy, urlProblem } from "./url-guard";

/** A receiver has this long to answer (headers and body) before the attempt counts as failed. */
export const DELIVERY_TIMEOUT_MS = 15_000;
/** How much of a receiver's answer is kept: returned by a manual trigger, stored in the attempt log. */
export const RESPONSE_BODY_LIMIT = 4096;
export const USER_AGENT = "AgentPlatform-Webhooks/1.0";

/** The JSON body of every delivery. */
export type DeliveryPayload = { id: string; type: string; createdAt: string; teamId: string; data: unknown };

export type SendOutcome = {
  ok: boolean;
  /** The receiver's HTTP status; null when none came back (timeout, network error, refused target). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  body: string;
  truncated: boolean;
  /** Worth trying again later: anything but success, 410 Gone and a refused target. */
  retryable: boolean;
  /** 410 Gone: the receiver asks us to stop; the endpoint is disabled. */
  gone: boolean;
};

/** Reads at most `limit` bytes of a body as text and drops the rest unread. */
async function readLimited(res: Response, limit: number): Promise<{ body: string; truncated: boolean }> {
  if (!res.body) return { body: "", truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > limit) {
      truncated = true;
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  const all = new Uint8Array(Math.min(size, limit));
  let offset = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, Math.max(0, all.length - offset));
    all.set(part, offset);
    offset += part.length;
  }
  // Not fatal: a multi-byte character cut by the limit becomes U+FFFD instead of throwing.
  return { body: new TextDecoder().decode(all), truncated };
}

function failure(error: string, durationMs: number, retryable: boolean): SendOutcome {
  return { ok: false, statusCode: null, durationMs, error, body: "", truncated: false, retryable, gone: false };
}

/**
 * One signed POST of a payload to a target (`body`: the payload's JSON, when the caller has it
 * already). Re-checks the target against the URL rules first (a DNS answer may have changed since
 * creation). Never throws for the receiver's faults.
 */
export async function sendSigned(
  env: Env,
  target: { url: string; secret: string },
  payload: DeliveryPayload,
  body: string = JSON.stringify(payload),
): Promise<SendOutcome> {
  const started = Date.now();
  try {
    const problem = await urlProblem(target.url, urlPolicy(env));
    if (problem) return failure(`target refused: ${problem}`, Date.now() - started, false);
  } catch (err) {
    if (err instanceof DnsLookupError) return failure(err.message, Date.now() - started, true);
    throw err;
  }

  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "webhook-id": payload.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": await sign(target.secret, payload.id, timestamp, body),
  };
  try {
    const res = await fetch(target.url, {
      method: "POST",
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    const read = await readLimited(res, RESPONSE_BODY_LIMIT);
    const durationMs = Date.now() - started;
    const ok = res.status >= 200 && res.status < 300;
    const gone = res.status === 410;
    let error: string | null = null;
    if (!ok) {
      error =
        res.status >= 300 && res.status < 400
          ? `receiver answered ${res.status}; redirects are not followed`
          : `receiver answered ${res.status}`;
    }
    return { ok, statusCode: res.status, durationMs, error, ...read, retryable: !ok && !gone, gone };
  } catch (err) {
    const durationMs = Date.now() - started;
    const name = err instanceof Error ? err.name : "";
    const message =
      name === "TimeoutError" || name === "AbortError"
        ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s (timeout)`
        : `network error: ${err instanceof Error ? err.message : String(err)}`;
    return failure(message, durationMs, true);
  }
}
