// Starts `wrangler dev` on a free port against a throw-away state directory (its own D1, Durable
// Objects, R2 and queues), migrated and seeded with one user, team and set of keys.
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { issueUser, toSqlFile } from "../../scripts/lib/issue-keys.mjs";
import { applyMigrations, d1ExecuteFile, spawnWrangler } from "../../scripts/lib/wrangler.mjs";

/** Limits high enough that the bench measures the limiter's cost, never its 429s. */
export const BENCH_VARS = {
  RATE_LIMIT_PUBLISHABLE: "1000000",
  RATE_LIMIT_SECRET: "1000000",
  RATE_LIMIT_USER: "1000000",
  RATE_LIMIT_ANONYMOUS: "1000000",
};

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHealth(baseUrl, child, output, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    // wrangler dev keeps watching after a failed build instead of exiting.
    if (/Build failed/.test(output())) throw new Error("wrangler dev could not build the Worker");
    try {
      const res = await fetch(`${baseUrl}/health`);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`wrangler dev did not answer /health within ${timeoutMs / 1000}s`);
}

/**
 * @param {{ vars?: Record<string, string>, log?: (line: string) => void }} [options]
 * @returns {Promise<{ baseUrl: string, keys: { userId: string, teamId: string, publishableKey: string, secretKey: string, userKey: string }, stop: () => Promise<void> }>}
 */
export async function startServer({ vars = {}, log = () => {} } = {}) {
  const persistTo = await mkdtemp(join(tmpdir(), "agent-platform-bench-"));
  const cleanup = () => rm(persistTo, { recursive: true, force: true });
  let child;
  try {
    log(`state in ${persistTo}: applying migrations`);
    await applyMigrations({ persistTo });
    const issued = await issueUser({ email: "bench@example.com", teamName: "Bench team", keyName: "bench" });
    await d1ExecuteFile(toSqlFile(issued.statements), { persistTo });

    const [port, inspectorPort] = [await freePort(), await freePort()];
    const varArgs = Object.entries({ ...BENCH_VARS, ...vars }).flatMap(([k, v]) => ["--var", `${k}:${v}`]);
    log(`starting wrangler dev on port ${port}`);
    let output = "";
    child = spawnWrangler(
      [
        "dev",
        "--ip", "127.0.0.1",
        "--port", String(port),
        "--inspector-port", String(inspectorPort),
        "--persist-to", persistTo,
        "--log-level", "warn",
        "--show-interactive-dev-session=false",
        ...varArgs,
      ],
      // Own process group, so that stop() ends wrangler and the workerd it started, nothing else.
      { stdio: ["ignore", "pipe", "pipe"], detached: true },
    );
    const keep = (d) => (output = (output + d).slice(-20_000));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);

    const baseUrl = `http://127.0.0.1:${port}`;
    try {
      await waitForHealth(baseUrl, child, () => output, 90_000);
    } catch (err) {
      throw new Error(`${err.message}\n--- wrangler output ---\n${output}`);
    }
    const { userId, teamId, publishableKey, secretKey, userKey } = issued;
    const server = child;
    return {
      baseUrl,
      keys: { userId, teamId, publishableKey, secretKey, userKey },
      output: () => output,
      stop: async () => {
        await stopProcessGroup(server);
        await cleanup();
      },
    };
  } catch (err) {
    if (child) await stopProcessGroup(child);
    await cleanup();
    throw err;
  }
}

async function stopProcessGroup(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  const signalGroup = (signal) => {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  signalGroup("SIGTERM");
  const timer = setTimeout(() => signalGroup("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
