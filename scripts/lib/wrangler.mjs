// Running wrangler from Node scripts (dev, issue-user-key, bench).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER = join(ROOT, "node_modules/wrangler/bin/wrangler.js");

/**
 * Wrangler needs Node 22. npm scripts already put the project's Node 22 (devDependency `node`)
 * first on the PATH; prefer it explicitly too, so `node scripts/x.mjs` works under Node 20.
 */
const PROJECT_NODE = join(ROOT, "node_modules/.bin/node");
export const NODE = existsSync(PROJECT_NODE) ? PROJECT_NODE : process.execPath;

/** No metrics or update checks: scripts and CI stay offline. */
export const WRANGLER_ENV = {
  WRANGLER_SEND_METRICS: "false",
  WRANGLER_HIDE_BANNER: "true",
  // Else wrangler dev fetches a `Request.cf` sample from workers.cloudflare.com at start.
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  ...process.env,
};

/** Spawns wrangler with `args`; the caller owns the child (used for `wrangler dev`). */
export function spawnWrangler(args, options = {}) {
  return spawn(NODE, [WRANGLER, ...args], { cwd: ROOT, env: WRANGLER_ENV, ...options });
}

/**
 * Runs wrangler to completion. `quiet` captures its output (shown only if it fails);
 * otherwise it goes to this terminal. Resolves with stdout when captured.
 */
export function runWrangler(args, { quiet = true } = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawnWrangler(args, { stdio: quiet ? ["ignore", "pipe", "pipe"] : ["ignore", "inherit", "inherit"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d) => (stdout += d));
    child.stderr?.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) return resolvePromise(stdout);
      reject(new Error(`wrangler ${args.join(" ")} exited with ${code}\n${stdout}${stderr}`));
    });
  });
}

/** Where a D1 command runs: local (optionally a persist dir) or remote, with an optional --env. */
function targetArgs({ remote = false, env, persistTo } = {}) {
  const args = [remote ? "--remote" : "--local"];
  if (env) args.push("--env", env);
  if (!remote && persistTo) args.push("--persist-to", persistTo);
  return args;
}

export async function applyMigrations(target = {}, { quiet = true } = {}) {
  await runWrangler(["d1", "migrations", "apply", "DB", ...targetArgs(target)], { quiet });
}

/** Runs SQL (one or more statements separated by `;`) and returns one result array per statement. */
export async function d1Query(sql, target = {}) {
  const out = await runWrangler(["d1", "execute", "DB", ...targetArgs(target), "--json", "--yes", "--command", sql]);
  const parsed = JSON.parse(out);
  return parsed.map((r) => r.results ?? []);
}

/** Runs a SQL file's worth of statements (a file because `--command` splits on every `;`). */
export async function d1ExecuteFile(sqlText, target = {}) {
  const dir = await mkdtemp(join(tmpdir(), "agent-platform-sql-"));
  const file = join(dir, "statements.sql");
  try {
    await writeFile(file, sqlText, { mode: 0o600 });
    await runWrangler(["d1", "execute", "DB", ...targetArgs(target), "--yes", "--file", file]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
