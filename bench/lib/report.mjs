// Printing results as a table.

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

/** @param {string} title @param {import("./load.mjs").Result[]} results */
export function printResults(title, results) {
  const rows = [
    ["scenario", "requests", "errors", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms"],
    ...results.map((r) => [
      r.name,
      String(r.requests),
      String(r.errors),
      fmt(r.rps, 0),
      fmt(r.p50, 2),
      fmt(r.p90, 2),
      fmt(r.p99, 2),
      fmt(r.max, 1),
    ]),
  ];
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  const line = (row) => row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ");
  console.log(`\n== ${title}`);
  console.log(line(rows[0]));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const row of rows.slice(1)) console.log(line(row));
  for (const r of results) if (r.firstError) console.log(`   ${r.name}: ${r.errors} errors, first: ${r.firstError}`);
}

/**
 * A throughput ratio against a target: `value = numerator.rps / denominator.rps`.
 * @returns {{ label: string, value: number, target?: number, met?: boolean }}
 */
export function ratio(label, numerator, denominator, target) {
  const value = numerator.rps / denominator.rps;
  return { label, value, target, met: target === undefined ? undefined : value >= target };
}

export function printRatios(ratios) {
  for (const r of ratios) {
    const goal = r.target === undefined ? "" : `  (target >= ${r.target}: ${r.met ? "met" : "NOT met"})`;
    console.log(`   ${r.label}: ${fmt(r.value, 2)}${goal}`);
  }
}
