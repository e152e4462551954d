// `npm run dev`: migrate the local D1, make sure the demo user and its keys exist, print them,
// write .wrangler/dev-keys.json, then run `wrangler dev` on $PORT (default 8787).
// Extra arguments go to wrangler dev: `npm run dev -- --ip 0.0.0.0`.
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { issueUser, keyCheckQuery, sqlLiteral, toSqlFile } from "./lib/issue-keys.mjs";
import { ROOT, applyMigrations, d1ExecuteFile, d1Query, spawnWrangler } from "./lib/wrangler.mjs";

const DEMO_EMAIL = "demo@example.com";
const DEMO_TEAM = "Demo team";
const KEYS_FILE = join(ROOT, ".wrangler/dev-keys.json");
const port = process.env.PORT || "8787";

async function readSavedKeys() {
  if (!existsSync(KEYS_FILE)) return null;
  try {
    const saved = JSON.parse(await readFile(KEYS_FILE, "utf8"));
    const fields = ["userId", "teamId", "publishableKey", "secretKey", "userKey"];
    return fields.every((f) => typeof saved[f] === "string" && saved[f]) ? saved : null;
  } catch {
    return null;
  }
}

/** Saved keys are reused only if all three are still live and the user still owns the team. */
function stillValid(saved, rows) {
  const has = (type, owner) => rows.some((r) => r.type === type && owner(r));
  return (
    rows.length === 3 &&
    rows[0]?.role === "OWNER" &&
    has("user", (r) => r.userId === saved.userId) &&
    has("publishable", (r) => r.teamId === saved.teamId) &&
    has("secret", (r) => r.teamId === saved.teamId)
  );
}

/** Only hashes are stored, so keys are kept stable by reusing dev-keys.json while it is valid. */
async function ensureDemoKeys() {
  const saved = await readSavedKeys();
  const lookup = `SELECT u.id AS userId, (SELECT m.team_id FROM memberships m WHERE m.user_id = u.id AND m.role = 'OWNER' ORDER BY m.created_at LIMIT 1) AS teamId FROM users u WHERE u.email = ${sqlLiteral(DEMO_EMAIL)}`;
  const queries = [lookup];
  if (saved) {
    queries.push(await keyCheckQuery([saved.publishableKey, saved.secretKey, saved.userKey], saved.userId, saved.teamId));
  }
  const [demoUser, check] = await d1Query(queries.join("; "));
  if (saved && check && stillValid(saved, check)) return { keys: saved, reused: true };

  // The demo user (and team) may exist while its keys are lost: reuse them, issue new keys.
  const existing = demoUser?.[0];
  const issued = await issueUser({
    email: DEMO_EMAIL,
    userName: "Demo User",
    userId: existing?.userId ?? undefined,
    teamId: existing?.teamId ?? undefined,
    teamName: DEMO_TEAM,
    keyName: "Demo key (npm run dev)",
  });
  await d1ExecuteFile(toSqlFile(issued.statements));
  const { userId, teamId, publishableKey, secretKey, userKey } = issued;
  return { keys: { userId, teamId, publishableKey, secretKey, userKey }, reused: false };
}

let keys;
let reused;
try {
  console.log("Applying migrations to the local D1...");
  await applyMigrations({}, { quiet: false });
  ({ keys, reused } = await ensureDemoKeys());
} catch (err) {
  console.error(`npm run dev: could not prepare the local D1.\n${err.message}`);
  process.exit(1);
}
await mkdir(join(ROOT, ".wrangler"), { recursive: true });
await writeFile(KEYS_FILE, JSON.stringify(keys, null, 2) + "\n", { mode: 0o600 });

console.log(`
Demo user ${DEMO_EMAIL}, OWNER of "${DEMO_TEAM}" (${reused ? "existing keys" : "new keys"}, saved in .wrangler/dev-keys.json):
  userId          ${keys.userId}
  teamId          ${keys.teamId}
  publishableKey  ${keys.publishableKey}
  secretKey       ${keys.secretKey}
  userKey         ${keys.userKey}

API on http://localhost:${port}  (reference: http://localhost:${port}/docs)
`);

const child = spawnWrangler(["dev", "--port", port, ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal ? 0 : 1));
});
