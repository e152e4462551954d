// A small closed-loop load generator: `concurrency` workers, each sending its next request as soon
// as the previous one has answered, for a fixed time. Node's global fetch is undici: its default
// Agent keeps connections alive and reuses them, so no connection set-up is measured.
import { summarize } from "./stats.mjs";

/**
 * A target's `url` and `init` are read afresh for every request, so getters may vary them
 * (e.g. hand out records round-robin).
 * @typedef {{ name: string, url: string, init?: RequestInit, expectStatus?: number }} Target
 * @typedef {{ name: string, requests: number, errors: number, seconds: number, rps: number, p50: number, p90: number, p99: number, max: number, mean: number, firstError?: string }} Result
 */

/** Runs one target; returns raw samples so that interleaved rounds can be merged. */
async function drive(target, { concurrency, durationMs }) {
  const expect = target.expectStatus ?? 200;
  const latencies = [];
  let errors = 0;
  let firstError;
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await fetch(target.url, target.init);
        await res.arrayBuffer(); // the connection returns to the pool only once the body is read
        if (res.status !== expect) {
          errors++;
          firstError ??= `HTTP ${res.status}`;
          continue;
        }
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= String(err?.cause ?? err);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { latencies, errors, firstError, seconds: (performance.now() - started) / 1000 };
}

function toResult(name, runs) {
  const latencies = runs.flatMap((r) => r.latencies);
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const errors = runs.reduce((a, r) => a + r.errors, 0);
  return {
    name,
    requests: latencies.length,
    errors,
    seconds,
    rps: latencies.length / seconds,
    ...summarize(latencies),
    firstError: runs.find((r) => r.firstError)?.firstError,
  };
}

/** Warms the path (isolate, caches, Durable Object, connections) without recording. */
async function warm(target, concurrency) {
  await drive(target, { concurrency, durationMs: 500 });
}

/**
 * Measures one target for `durationMs`.
 * @param {Target} target
 * @returns {Promise<Result>}
 */
export async function load(target, { concurrency = 8, durationMs = 5_000 } = {}) {
  await warm(target, concurrency);
  return toResult(target.name, [await drive(target, { concurrency, durationMs })]);
}

/**
 * Measures several targets to compare them: `rounds` alternating slices of `durationMs` each,
 * so that noise from the machine (other processes, GC) falls on all of them alike.
 * @param {Target[]} targets
 * @returns {Promise<Result[]>}
 */
export async function compare(targets, { concurrency = 8, durationMs = 5_000, rounds = 3 } = {}) {
  for (const t of targets) await warm(t, concurrency);
  const runs = targets.map(() => []);
  const slice = durationMs / rounds;
  for (let round = 0; round < rounds; round++) {
    for (const [i, t] of targets.entries()) runs[i].push(await drive(t, { concurrency, durationMs: slice }));
  }
  return targets.map((t, i) => toResult(t.name, runs[i]));
}
