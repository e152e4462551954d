// Issuing a user with keys as plain SQL, for places that have no API key yet: `npm run dev`
// (the demo user), `npm run issue-user-key` (the first user on a fresh deployment) and the bench.
// Pure ES module: WebCrypto only, no node: imports, so that the tests run it inside workerd.
// The key format mirrors src/keys/key-format.ts; test/scripts/issue-keys.test.ts proves that the
// Worker accepts what this module writes.

export const KEY_PREFIXES = { publishable: "pk_live_", secret: "sk_live_", user: "usk_live_" };

/** Mirrors src/keys/key-format.ts: 40 base62 characters after the prefix; listings show prefix + 4. */
const RANDOM_PART_LENGTH = 40;
const DISPLAY_PREFIX_EXTRA = 4;
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniform base62 (rejection sampling), as src/lib/ids.ts. */
export function randomString(length) {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

export function newId(prefix) {
  return `${prefix}_${randomString(20)}`;
}

export async function sha256Hex(value) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A new key of `type`: the plaintext (shown once), its SHA-256 (stored) and its display prefix. */
export async function generateKey(type) {
  const prefix = KEY_PREFIXES[type];
  if (!prefix) throw new Error(`unknown key type: ${type}`);
  const plaintext = prefix + randomString(RANDOM_PART_LENGTH);
  return { plaintext, hash: await sha256Hex(plaintext), prefix: plaintext.slice(0, prefix.length + DISPLAY_PREFIX_EXTRA) };
}

/** A SQL literal. Statements go through `wrangler d1 execute --file`, which takes no bound parameters. */
export function sqlLiteral(value) {
  if (value === null || value === undefined) return "NULL";
  return `'${String(value).replaceAll("'", "''")}'`;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * The SQL that gives a user (new, or existing by id) a team where they are OWNER (new, or
 * existing by id, or none) and keys: a user key, and a publishable and a secret key of the team.
 *
 * @param {import("./issue-keys.mjs").IssueInput} input
 * @returns {Promise<import("./issue-keys.mjs").IssuedUser>}
 */
export async function issueUser(input) {
  const email = String(input.email ?? "").trim().toLowerCase();
  if (!EMAIL.test(email)) throw new Error(`not an email address: ${input.email}`);
  const now = new Date().toISOString();
  const statements = [];

  const userId = input.userId ?? newId("user");
  if (!input.userId) {
    statements.push(
      `INSERT INTO users (id, email, name, created_at) VALUES (${sqlLiteral(userId)}, ${sqlLiteral(email)}, ${sqlLiteral(input.userName ?? null)}, ${sqlLiteral(now)})`,
    );
  }

  let teamId = input.teamId ?? null;
  if (!teamId && input.teamName !== undefined) {
    const name = String(input.teamName).trim();
    if (!name) throw new Error("the team name is empty");
    teamId = newId("team");
    statements.push(
      `INSERT INTO teams (id, name, metadata, created_at, updated_at) VALUES (${sqlLiteral(teamId)}, ${sqlLiteral(name)}, ${sqlLiteral(JSON.stringify(input.teamMetadata ?? {}))}, ${sqlLiteral(now)}, ${sqlLiteral(now)})`,
    );
    statements.push(
      `INSERT INTO memberships (team_id, user_id, role, created_at) VALUES (${sqlLiteral(teamId)}, ${sqlLiteral(userId)}, 'OWNER', ${sqlLiteral(now)})`,
    );
  }

  const keyName = input.keyName ?? "Issued by script";
  const insertKey = async (type, owner) => {
    const key = await generateKey(type);
    statements.push(
      `INSERT INTO api_keys (id, type, name, hash, prefix, team_id, user_id, created_by, created_at) VALUES (${sqlLiteral(newId("key"))}, ${sqlLiteral(type)}, ${sqlLiteral(keyName)}, ${sqlLiteral(key.hash)}, ${sqlLiteral(key.prefix)}, ${sqlLiteral(owner.teamId ?? null)}, ${sqlLiteral(owner.userId ?? null)}, ${sqlLiteral(owner.teamId ? userId : null)}, ${sqlLiteral(now)})`,
    );
    return key.plaintext;
  };

  const userKey = await insertKey("user", { userId });
  const publishableKey = teamId && input.teamKeys !== false ? await insertKey("publishable", { teamId }) : null;
  const secretKey = teamId && input.teamKeys !== false ? await insertKey("secret", { teamId }) : null;
  return { userId, teamId, email, publishableKey, secretKey, userKey, statements };
}

/** The statements as one file for `wrangler d1 execute --file` (D1 runs a file as one unit). */
export function toSqlFile(statements) {
  return statements.map((s) => `${s};`).join("\n") + "\n";
}

/**
 * A read-only query that tells whether saved keys still work: one row per live key among `keys`
 * (its type, team and user), plus the role of `userId` in `teamId`.
 */
export async function keyCheckQuery(keys, userId, teamId) {
  const hashes = await Promise.all(keys.map((k) => sha256Hex(k)));
  return `SELECT type, team_id AS teamId, user_id AS userId, (SELECT role FROM memberships WHERE team_id = ${sqlLiteral(teamId)} AND user_id = ${sqlLiteral(userId)}) AS role FROM api_keys WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) AND hash IN (${hashes.map(sqlLiteral).join(", ")})`;
}
