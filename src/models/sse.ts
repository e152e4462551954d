import { isRecord } from "./remote";
import { ProviderError } from "./types";

/**
 * Server-sent events reader: yields the `data` of each event (multi-line data joined with "\n"),
 * skipping comments and other fields. Handles \n, \r\n and events split across chunks.
 * When `signal` fires the read stops and the signal's reason is thrown (a stream that is not tied
 * to a fetch, like the AI binding's, would otherwise wait forever).
 */
export async function* sseData(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const onAbort = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener("abort", onAbort, { once: true });
  let buffer = "";
  let data: string[] = [];
  let finished = false;
  try {
    for (;;) {
      signal?.throwIfAborted();
      const { done, value } = await reader.read();
      signal?.throwIfAborted();
      if (done) {
        finished = true;
        break;
      }
      buffer += value;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, "");
        buffer = buffer.slice(nl + 1);
        if (line === "") {
          if (data.length) yield data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) {
          data.push(line.slice(5).replace(/^ /, ""));
        }
        // other fields (event:, id:, retry:) and comments (":") carry nothing we use
      }
    }
    const tail = buffer.replace(/\r$/, "");
    if (tail.startsWith("data:")) data.push(tail.slice(5).replace(/^ /, ""));
    if (data.length) yield data.join("\n");
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // A consumer that stops early (error, abort) must not leave the upstream connection open.
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** Rejects with the signal's reason when it fires first (for APIs that may ignore their signal). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/** One event of a model's JSON stream: an object, or the "[DONE]" marker that ends it. */
export type SseJsonEvent = { done: false; chunk: Record<string, unknown>; raw: string } | { done: true };

/**
 * The JSON objects of a model's SSE stream (OpenAI and Workers AI speak the same framing), up to
 * and including the "[DONE]" marker. Anything that is not a JSON object is a "malformed" error.
 */
export async function* sseJsonEvents(
  body: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  provider: string,
): AsyncGenerator<SseJsonEvent> {
  for await (const raw of sseData(body, signal)) {
    if (raw.trim() === "[DONE]") {
      yield { done: true };
      return;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(raw);
    } catch (err) {
      throw new ProviderError("malformed", `${provider}: a stream event is not JSON`, { cause: err });
    }
    if (!isRecord(chunk)) throw new ProviderError("malformed", `${provider}: a stream event is not an object`);
    yield { done: false, chunk, raw };
  }
}
