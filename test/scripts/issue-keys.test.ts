import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  KEY_PREFIXES,
  issueUser,
  keyCheckQuery,
  sha256Hex,
  toSqlFile,
} from "../../scripts/lib/issue-keys.mjs";
import { KEY_PREFIXES as WORKER_KEY_PREFIXES, keyTypeOf } from "../../src/keys/key-format";
import { call, createUser, json } from "../helpers/world";

/** What `wrangler d1 execute --file` does with the module's output, inside workerd's real D1. */
async function runStatements(statements: string[]) {
  await env.DB.batch(statements.map((s) => env.DB.prepare(s)));
}

const uniqueEmail = () => `${crypto.randomUUID()}@example.com`;

describe("scripts/lib/issue-keys.mjs", () => {
  it("writes keys in the Worker's format", async () => {
    expect(KEY_PREFIXES).toEqual(WORKER_KEY_PREFIXES);
    const issued = await issueUser({ email: uniqueEmail(), teamName: "Format" });
    expect(issued.userKey).toMatch(/^usk_live_[0-9A-Za-z]{40}$/);
    expect(issued.secretKey).toMatch(/^sk_live_[0-9A-Za-z]{40}$/);
    expect(issued.publishableKey).toMatch(/^pk_live_[0-9A-Za-z]{40}$/);
    expect(keyTypeOf(issued.userKey)).toBe("user");
    await runStatements(issued.statements);

    const rows = await env.DB.prepare("SELECT type, hash, prefix, team_id, user_id FROM api_keys WHERE user_id = ? OR team_id = ?")
      .bind(issued.userId, issued.teamId)
      .all<{ type: string; hash: string; prefix: string; team_id: string | null; user_id: string | null }>();
    expect(rows.results).toHaveLength(3);
    const user = rows.results.find((r) => r.type === "user");
    expect(user?.hash).toBe(await sha256Hex(issued.userKey));
    expect(user?.prefix).toBe(issued.userKey.slice(0, "usk_live_".length + 4));
    expect(user?.team_id).toBeNull();
    // No plaintext key is stored anywhere.
    const stored = JSON.stringify(rows.results);
    for (const key of [issued.userKey, issued.secretKey, issued.publishableKey]) expect(stored).not.toContain(key);
  });

  it("issues a user who owns a new team, usable through the API", async () => {
    const email = uniqueEmail();
    const issued = await issueUser({ email, userName: "First Admin", teamName: "Acme", teamMetadata: { plan: "pro" } });
    await runStatements(issued.statements);
    const usk = issued.userKey;
    const teamId = issued.teamId as string;

    const teams = await call("GET", "/team", { key: usk });
    expect(teams.status).toBe(200);
    expect(await json(teams)).toEqual([
      expect.objectContaining({ id: teamId, name: "Acme", metadata: { plan: "pro" }, role: "OWNER" }),
    ]);

    const detail = await call("GET", `/team/${teamId}`, { key: usk });
    expect(detail.status).toBe(200);
    expect((await json(detail)).members).toEqual([
      expect.objectContaining({ userId: issued.userId, email, name: "First Admin", role: "OWNER" }),
    ]);

    // The user key can mint further keys for its team.
    const minted = await call("POST", `/team/${teamId}/keys`, { key: usk, body: { type: "secret" } });
    expect(minted.status).toBe(201);

    // The team keys act as team keys: no team management.
    expect((await call("GET", "/team", { key: issued.secretKey as string })).status).toBe(403);
    expect((await call("GET", `/team/${teamId}`, { key: issued.secretKey as string })).status).toBe(403);
    expect((await call("GET", "/team", { key: issued.publishableKey as string })).status).toBe(403);
  });

  it("runs as one SQL file (the --file path) and quotes names safely", async () => {
    const issued = await issueUser({ email: `  ${uniqueEmail().toUpperCase()} `, teamName: "O'Brien's team; DROP TABLE users" });
    const file = toSqlFile(issued.statements);
    expect(file.trim().split("\n")).toHaveLength(issued.statements.length);
    await env.DB.exec(file);

    const teams = await json<{ name: string }[]>(await call("GET", "/team", { key: issued.userKey }));
    expect(teams.map((t) => t.name)).toEqual(["O'Brien's team; DROP TABLE users"]);
    const user = await env.DB.prepare("SELECT email FROM users WHERE id = ?").bind(issued.userId).first<{ email: string }>();
    expect(user?.email).toBe(issued.email);
    expect(issued.email).toBe(issued.email.trim().toLowerCase());
  });

  it("adds a key and a team to an existing user without touching the user row", async () => {
    const existing = await createUser();
    const issued = await issueUser({ email: existing.email, userId: existing.id, teamName: "Second", teamKeys: false });
    expect(issued.statements.some((s) => s.startsWith("INSERT INTO users"))).toBe(false);
    expect(issued.publishableKey).toBeNull();
    expect(issued.secretKey).toBeNull();
    await runStatements(issued.statements);

    // Both the old and the new user key see the new team.
    for (const key of [existing.userKey, issued.userKey]) {
      const teams = await json<{ id: string }[]>(await call("GET", "/team", { key }));
      expect(teams.map((t) => t.id)).toEqual([issued.teamId]);
    }
  });

  it("issues only a user key when no team is named", async () => {
    const issued = await issueUser({ email: uniqueEmail() });
    expect(issued.teamId).toBeNull();
    await runStatements(issued.statements);
    const teams = await call("GET", "/team", { key: issued.userKey });
    expect(teams.status).toBe(200);
    expect(await json(teams)).toEqual([]);
    const created = await call("POST", "/team", { key: issued.userKey, body: { name: "Made later" } });
    expect(created.status).toBe(201);
  });

  it("refuses an invalid email or an empty team name", async () => {
    await expect(issueUser({ email: "not-an-email" })).rejects.toThrow(/email/);
    await expect(issueUser({ email: uniqueEmail(), teamName: "  " })).rejects.toThrow(/team name/);
  });

  it("keyCheckQuery finds live keys and drops revoked ones (how npm run dev reuses dev-keys.json)", async () => {
    const issued = await issueUser({ email: uniqueEmail(), teamName: "Check" });
    await runStatements(issued.statements);
    const teamId = issued.teamId as string;
    const keys = [issued.publishableKey as string, issued.secretKey as string, issued.userKey];
    const check = async () =>
      (await env.DB.prepare(await keyCheckQuery(keys, issued.userId, teamId)).all<{ type: string; role: string | null }>())
        .results;

    const live = await check();
    expect(live.map((r) => r.type).sort()).toEqual(["publishable", "secret", "user"]);
    expect(live.every((r) => r.role === "OWNER")).toBe(true);

    const listed = await json<{ keys: { id: string; type: string }[] }>(
      await call("GET", `/team/${teamId}/keys`, { key: issued.userKey }),
    );
    const secretId = listed.keys.find((k) => k.type === "secret")?.id;
    expect((await call("DELETE", `/team/${teamId}/keys/${secretId}`, { key: issued.userKey })).status).toBe(204);
    expect((await check()).map((r) => r.type).sort()).toEqual(["publishable", "user"]);
  });
});
