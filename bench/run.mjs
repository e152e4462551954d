// `npm run bench [-- scenario...] [--duration 10] [--concurrency 8] [--rounds 4]`
// Starts `wrangler dev` once (fresh state, high rate limits), runs every scenario of
// bench/scenarios/ (or the ones named), prints a table per scenario and its ratios.
import { readdir } from "node:fs/promises";
import { availableParallelism, cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { compare, load } from "./lib/load.mjs";
import { printRatios, printResults, ratio } from "./lib/report.mjs";
import { startServer } from "./lib/server.mjs";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    duration: { type: "string", default: process.env.BENCH_DURATION ?? "10" },
    concurrency: { type: "string", default: process.env.BENCH_CONCURRENCY ?? "8" },
    rounds: { type: "string", default: process.env.BENCH_ROUNDS ?? "4" },
    list: { type: "boolean", default: false },
  },
});
const settings = {
  durationMs: Number(values.duration) * 1000,
  concurrency: Number(values.concurrency),
  rounds: Number(values.rounds),
};

const dir = join(dirname(fileURLToPath(import.meta.url)), "scenarios");
const all = [];
for (const file of (await readdir(dir)).filter((f) => f.endsWith(".mjs")).sort()) {
  const scenario = (await import(pathToFileURL(join(dir, file)).href)).default;
  all.push(scenario);
}
if (values.list) {
  for (const s of all) console.log(`${s.name.padEnd(16)} ${s.description}`);
  process.exit(0);
}
const unknown = positionals.filter((name) => !all.some((s) => s.name === name));
if (unknown.length) {
  console.error(`Unknown scenario(s): ${unknown.join(", ")}. Known: ${all.map((s) => s.name).join(", ")}`);
  process.exit(2);
}
const selected = positionals.length ? all.filter((s) => positionals.includes(s.name)) : all;

console.log(
  `bench: ${selected.map((s) => s.name).join(", ")} | node ${process.version}, ${availableParallelism()} CPUs (${cpus()[0]?.model ?? "?"}) | ` +
    `${settings.concurrency} concurrent, ${settings.durationMs / 1000}s per target in ${settings.rounds} rounds`,
);
const server = await startServer({ log: (line) => console.log(`   ${line}`) });
let failed = false;
const stop = async () => {
  await server.stop();
};
process.once("SIGINT", async () => {
  await stop();
  process.exit(130);
});

async function api(path, { method = "GET", key, body } = {}) {
  const res = await fetch(server.baseUrl + path, {
    method,
    headers: { ...(key ? { "x-api-key": key } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

try {
  for (const scenario of selected) {
    const { results, ratios = [] } = await scenario.run({
      baseUrl: server.baseUrl,
      keys: server.keys,
      settings,
      load,
      compare,
      ratio,
      api,
    });
    printResults(`${scenario.name}: ${scenario.description}`, results);
    printRatios(ratios);
    if (results.some((r) => r.errors > 0)) failed = true;
  }
} catch (err) {
  console.error(err);
  failed = true;
} finally {
  await stop();
}
// Errors (non-2xx answers, refused connections) fail the run; ratios below target are reported only,
// because a shared machine's noise is no reason to fail a build.
process.exit(failed ? 1 : 0);
