// Latency statistics over one list of samples (milliseconds).

/** Nearest-rank percentile of an ascending array; p in [0, 100]. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** @param {number[]} samples */
export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  const total = sorted.reduce((a, b) => a + b, 0);
  return {
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    mean: sorted.length ? total / sorted.length : NaN,
  };
}
