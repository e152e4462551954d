import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { probeRouter, testApp } from "./helpers/test-app";
import { BASE, addMember, call, createTeam, createUser, createWorld, insertKey, json } from "./helpers/world";

type Member = { userId: string; email: string; name: string | null; role: string; joinedAt: string };
type KeySummary = { id: string; type: string; name: string | null; prefix: string; createdAt: string; lastUsedAt: string | null };

/** A team-scoped route that echoes the caller's team: proves which team a key acts for. */
const app = testApp([probeRouter()]);
const teamOfKey = async (key: string) => {
  const res = await app(new Request(BASE + "/chat/known", { headers: { "x-api-key": key } }));
  return res.status === 200 ? (await json<{ teamId: string }>(res)).teamId : res.status;
};

describe("teams", () => {
  it("POST /team makes the caller OWNER; GET /team lists the teams it manages", async () => {
    const w = await createWorld();
    const res = await call("POST", "/team", { key: w.member.userKey, body: { name: "  Side project ", metadata: { plan: "pro" } } });
    expect(res.status).toBe(201);
    const team = await json(res);
    expect(team).toMatchObject({ name: "Side project", metadata: { plan: "pro" }, role: "OWNER" });
    expect(team.id).toMatch(/^team_/);

    // The member of team A manages only its new team; the admin manages team A.
    const memberTeams = await json<{ id: string; role: string }[]>(await call("GET", "/team", { key: w.member.userKey }));
    expect(memberTeams.map((t) => [t.id, t.role])).toEqual([[team.id, "OWNER"]]);
    const adminTeams = await json<{ id: string; name: string; metadata: object; role: string }[]>(
      await call("GET", "/team", { key: w.admin.userKey }),
    );
    expect(adminTeams).toEqual([expect.objectContaining({ id: w.teamA.id, name: "Team A", metadata: {}, role: "ADMIN" })]);
  });

  it("validates the team body and its metadata (string to string)", async () => {
    const user = await createUser();
    for (const body of [{}, { name: "" }, { name: "x", metadata: { n: 1 } }, { name: "x", metadata: ["a"] }, { name: "x", extra: 1 }]) {
      const res = await call("POST", "/team", { key: user.userKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("GET /team/{teamId} gives details with members and roles", async () => {
    const w = await createWorld();
    const res = await call("GET", `/team/${w.teamA.id}`, { key: w.admin.userKey });
    expect(res.status).toBe(200);
    const detail = await json<{ id: string; name: string; role: string; members: Member[] }>(res);
    expect(detail).toMatchObject({ id: w.teamA.id, name: "Team A", role: "ADMIN" });
    const roles = Object.fromEntries(detail.members.map((m) => [m.email, m.role]));
    expect(roles).toEqual({ [w.owner.email]: "OWNER", [w.admin.email]: "ADMIN", [w.member.email]: "MEMBER" });
    const members = await json<{ members: Member[] }>(await call("GET", `/team/${w.teamA.id}/members`, { key: w.owner.userKey }));
    expect(members.members).toHaveLength(3);
  });

  it("PUT /team/{teamId} renames and replaces the metadata", async () => {
    const w = await createWorld();
    const res = await call("PUT", `/team/${w.teamA.id}`, { key: w.admin.userKey, body: { name: "Renamed", metadata: { a: "1" } } });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: w.teamA.id, name: "Renamed", metadata: { a: "1" } });
    const partial = await json(await call("PUT", `/team/${w.teamA.id}`, { key: w.owner.userKey, body: { metadata: {} } }));
    expect(partial).toMatchObject({ name: "Renamed", metadata: {} });
  });

  it("a MEMBER, an outsider and team keys get 403 on every team-management route", async () => {
    const w = await createWorld();
    const a = w.teamA.id;
    const routes: [string, string, unknown?][] = [
      ["GET", `/team/${a}`],
      ["PUT", `/team/${a}`, { name: "x" }],
      ["GET", `/team/${a}/members`],
      ["PUT", `/team/${a}/members/${w.owner.id}`, { role: "MEMBER" }],
      ["DELETE", `/team/${a}/members/${w.owner.id}`],
      ["POST", `/team/${a}/invitations`, { email: "x@example.com" }],
      ["GET", `/team/${a}/invitations`],
      ["POST", `/team/${a}/keys`, { type: "secret" }],
      ["GET", `/team/${a}/keys`],
      ["DELETE", `/team/${a}/keys/${w.teamA.skId}`],
    ];
    for (const key of [w.member.userKey, w.outsider.userKey, w.teamA.sk, w.teamB.sk]) {
      for (const [method, path, body] of routes) {
        const res = await call(method, path, { key, body });
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    }
    for (const key of [w.teamA.sk, w.teamA.pk]) {
      expect((await call("POST", "/team", { key, body: { name: "x" } })).status).toBe(403);
      expect((await call("GET", "/team", { key })).status).toBe(403);
    }
    // Nothing changed.
    expect((await call("GET", `/team/${a}`, { key: w.owner.userKey }).then(json)).name).toBe("Team A");
    expect(await teamOfKey(w.teamA.sk)).toBe(a);
  });
});

describe("API keys", () => {
  it("creates a key shown once with its prefix; the listing never shows it; the key acts for its team", async () => {
    const w = await createWorld();
    const created = await call("POST", `/team/${w.teamA.id}/keys`, { key: w.admin.userKey, body: { type: "secret", name: "CI" } });
    expect(created.status).toBe(201);
    const key = await json<KeySummary & { key: string; expiresAt: string | null }>(created);
    expect(key.key).toMatch(/^sk_live_[A-Za-z0-9]{32,}$/);
    expect(key).toMatchObject({ type: "secret", name: "CI", lastUsedAt: null, expiresAt: null });
    expect(key.key.startsWith(key.prefix)).toBe(true);
    expect(key.prefix.length).toBeLessThan(16);

    const pk = await json<{ key: string; type: string }>(
      await call("POST", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey, body: { type: "publishable" } }),
    );
    expect(pk.key).toMatch(/^pk_live_[A-Za-z0-9]{32,}$/);
    expect(pk.type).toBe("publishable");

    const listRes = await call("GET", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey });
    const text = await listRes.text();
    expect(text).not.toContain(key.key);
    expect(text).not.toContain(pk.key);
    const { keys } = JSON.parse(text) as { keys: (KeySummary & Record<string, unknown>)[] };
    const listed = keys.find((k) => k.id === key.id);
    expect(listed).toBeDefined();
    expect(Object.keys(listed ?? {}).sort()).toEqual(["createdAt", "expiresAt", "id", "lastUsedAt", "name", "prefix", "type"]);
    // Team A's keys only: its two seeded keys, the two new ones (the revoked one is gone).
    expect(keys.map((k) => k.id).sort()).toEqual([w.teamA.pkId, w.teamA.skId, key.id, (pk as unknown as { id: string }).id].sort());

    expect(await teamOfKey(key.key)).toBe(w.teamA.id);
    expect(await teamOfKey(pk.key)).toBe(w.teamA.id);
    // lastUsedAt is written after a use.
    const after = await json<{ keys: KeySummary[] }>(await call("GET", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey }));
    expect(after.keys.find((k) => k.id === key.id)?.lastUsedAt).toEqual(expect.any(String));
  });

  it("key types must be publishable or secret", async () => {
    const w = await createWorld();
    for (const body of [{}, { type: "user" }, { type: "admin" }, { type: "secret", extra: 1 }]) {
      const res = await call("POST", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey, body });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toMatch(/type|extra/);
    }
  });

  it("revoking a key makes it fail with 401 at once", async () => {
    const w = await createWorld();
    const created = await json<{ id: string; key: string }>(
      await call("POST", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey, body: { type: "secret" } }),
    );
    // Used once, so it sits in the isolate's key cache.
    expect(await teamOfKey(created.key)).toBe(w.teamA.id);
    const revoked = await call("DELETE", `/team/${w.teamA.id}/keys/${created.id}`, { key: w.admin.userKey });
    expect(revoked.status).toBe(204);
    expect(await teamOfKey(created.key)).toBe(401);
    const res = await call("GET", "/team", { key: created.key });
    expect(res.status).toBe(401);
    expect(await json(res)).toEqual({ message: expect.any(String) });
    // Gone from the listing; a second revoke is a 404.
    const { keys } = await json<{ keys: KeySummary[] }>(await call("GET", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey }));
    expect(keys.map((k) => k.id)).not.toContain(created.id);
    expect((await call("DELETE", `/team/${w.teamA.id}/keys/${created.id}`, { key: w.owner.userKey })).status).toBe(404);
  });

  it("a key of another team is 404 and stays alive", async () => {
    const w = await createWorld();
    const res = await call("DELETE", `/team/${w.teamA.id}/keys/${w.teamB.skId}`, { key: w.owner.userKey });
    expect(res.status).toBe(404);
    expect(await teamOfKey(w.teamB.sk)).toBe(w.teamB.id);
    // A user key is no team key either.
    expect((await call("DELETE", `/team/${w.teamA.id}/keys/${w.owner.userKeyId}`, { key: w.owner.userKey })).status).toBe(404);
  });

  it("expiry: in the past is refused; an expired key is unknown", async () => {
    const w = await createWorld();
    const past = await call("POST", `/team/${w.teamA.id}/keys`, {
      key: w.owner.userKey,
      body: { type: "secret", expiresAt: "2020-01-01T00:00:00Z" },
    });
    expect(past.status).toBe(400);
    expect((await json(past)).message).toContain("expiresAt");

    const future = new Date(Date.now() + 3600_000).toISOString();
    const ok = await json<{ key: string; expiresAt: string }>(
      await call("POST", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey, body: { type: "secret", expiresAt: future } }),
    );
    expect(ok.expiresAt).toBe(future);
    expect(await teamOfKey(ok.key)).toBe(w.teamA.id);

    const expired = await insertKey("secret", { teamId: w.teamA.id });
    await env.DB.prepare("UPDATE api_keys SET expires_at = ? WHERE id = ?").bind("2020-01-01T00:00:00.000Z", expired.id).run();
    expect(await teamOfKey(expired.key)).toBe(401);
  });
});

describe("invitations and members", () => {
  async function invite(teamId: string, key: string, email: string, role?: string) {
    return call("POST", `/team/${teamId}/invitations`, { key, body: role ? { email, role } : { email } });
  }
  const accept = (token: string, name?: string) =>
    call("POST", "/invitations/accept", { body: name ? { token, name } : { token } });

  it("invite -> accept without a key by token -> a new user with a working user key -> member listed", async () => {
    const w = await createWorld();
    const res = await invite(w.teamA.id, w.admin.userKey, "New.Person@Example.com", "ADMIN");
    expect(res.status).toBe(201);
    const invitation = await json<{ id: string; email: string; role: string; token: string; expiresAt: string }>(res);
    expect(invitation).toMatchObject({ email: "new.person@example.com", role: "ADMIN" });
    expect(invitation.token.length).toBeGreaterThanOrEqual(32);

    const pending = await call("GET", `/team/${w.teamA.id}/invitations`, { key: w.owner.userKey });
    const pendingText = await pending.text();
    expect(pendingText).toContain(invitation.id);
    expect(pendingText).not.toContain(invitation.token);

    const accepted = await accept(invitation.token, "New Person");
    expect(accepted.status).toBe(200);
    const body = await json<{ teamId: string; userId: string; role: string; userKey: string }>(accepted);
    expect(body).toMatchObject({ teamId: w.teamA.id, role: "ADMIN" });
    expect(body.userKey).toMatch(/^usk_live_[A-Za-z0-9]{32,}$/);

    // The new key works: the team is listed and its details reachable.
    const teams = await json<{ id: string; role: string }[]>(await call("GET", "/team", { key: body.userKey }));
    expect(teams.map((t) => [t.id, t.role])).toEqual([[w.teamA.id, "ADMIN"]]);
    const detail = await json<{ members: Member[] }>(await call("GET", `/team/${w.teamA.id}`, { key: body.userKey }));
    expect(detail.members.find((m) => m.userId === body.userId)).toMatchObject({
      email: "new.person@example.com",
      name: "New Person",
      role: "ADMIN",
    });
    // No longer pending; the token cannot be used twice.
    expect(await (await call("GET", `/team/${w.teamA.id}/invitations`, { key: w.owner.userKey })).text()).not.toContain(invitation.id);
    const again = await accept(invitation.token);
    expect(again.status).toBe(400);
    expect((await json(again)).error).toBe("Bad Request");
  });

  it("an existing user accepts with the token and keeps its own key (none is issued)", async () => {
    const w = await createWorld();
    const invitation = await json<{ token: string }>(await invite(w.teamA.id, w.owner.userKey, w.outsider.email, "ADMIN"));
    const body = await json(await accept(invitation.token));
    expect(body).toEqual({ teamId: w.teamA.id, userId: w.outsider.id, role: "ADMIN" });
    expect((await call("GET", `/team/${w.teamA.id}`, { key: w.outsider.userKey })).status).toBe(200);
  });

  it("a token accepted twice at the same moment succeeds once", async () => {
    const w = await createWorld();
    const fresh = await json<{ token: string }>(await invite(w.teamA.id, w.owner.userKey, "race@example.com"));
    const existing = await json<{ token: string }>(await invite(w.teamA.id, w.owner.userKey, w.outsider.email));
    for (const token of [fresh.token, existing.token]) {
      const statuses = (await Promise.all([accept(token), accept(token), accept(token)])).map((r) => r.status).sort();
      expect(statuses).toEqual([200, 400, 400]);
    }
    const { members } = await json<{ members: Member[] }>(await call("GET", `/team/${w.teamA.id}/members`, { key: w.owner.userKey }));
    expect(members.filter((m) => m.email === "race@example.com")).toHaveLength(1);
    const keys = await env.DB.prepare(
      "SELECT count(*) AS n FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.email = 'race@example.com'",
    ).first<{ n: number }>();
    expect(keys?.n).toBe(1);
  });

  it("refuses unknown, withdrawn and already-member invitations", async () => {
    const w = await createWorld();
    expect((await accept("inv_" + "n".repeat(40))).status).toBe(400);
    expect((await invite(w.teamA.id, w.owner.userKey, w.member.email)).status).toBe(409);

    const inv = await json<{ id: string; token: string }>(await invite(w.teamA.id, w.owner.userKey, "gone@example.com"));
    expect((await call("DELETE", `/team/${w.teamA.id}/invitations/${inv.id}`, { key: w.admin.userKey })).status).toBe(204);
    expect((await accept(inv.token)).status).toBe(400);
    // Another team cannot withdraw it.
    const other = await json<{ id: string }>(await invite(w.teamA.id, w.owner.userKey, "kept@example.com"));
    expect((await call("DELETE", `/team/${w.teamB.id}/invitations/${other.id}`, { key: w.outsider.userKey })).status).toBe(404);
  });

  it("an ADMIN cannot grant, change or remove OWNER", async () => {
    const w = await createWorld();
    const a = w.teamA.id;
    expect((await invite(a, w.admin.userKey, "boss@example.com", "OWNER")).status).toBe(403);
    expect((await call("PUT", `/team/${a}/members/${w.member.id}`, { key: w.admin.userKey, body: { role: "OWNER" } })).status).toBe(403);
    expect((await call("PUT", `/team/${a}/members/${w.admin.id}`, { key: w.admin.userKey, body: { role: "OWNER" } })).status).toBe(403);
    expect((await call("PUT", `/team/${a}/members/${w.owner.id}`, { key: w.admin.userKey, body: { role: "MEMBER" } })).status).toBe(403);
    expect((await call("DELETE", `/team/${a}/members/${w.owner.id}`, { key: w.admin.userKey })).status).toBe(403);
    // What an ADMIN may do: promote a MEMBER to ADMIN and remove them again.
    const promoted = await call("PUT", `/team/${a}/members/${w.member.id}`, { key: w.admin.userKey, body: { role: "ADMIN" } });
    expect(await json(promoted)).toEqual({ userId: w.member.id, role: "ADMIN" });
    expect((await call("GET", `/team/${a}`, { key: w.member.userKey })).status).toBe(200);
    expect((await call("DELETE", `/team/${a}/members/${w.member.id}`, { key: w.admin.userKey })).status).toBe(204);
    // A removed member's key loses the team at once.
    expect((await call("GET", `/team/${a}`, { key: w.member.userKey })).status).toBe(403);
    expect((await call("PUT", `/team/${a}/members/${w.member.id}`, { key: w.owner.userKey, body: { role: "ADMIN" } })).status).toBe(404);
  });

  it("the last OWNER can be neither demoted nor removed; with two, one can go", async () => {
    const w = await createWorld();
    const a = w.teamA.id;
    const demote = await call("PUT", `/team/${a}/members/${w.owner.id}`, { key: w.owner.userKey, body: { role: "ADMIN" } });
    expect(demote.status).toBe(409);
    expect((await json(demote)).error).toBe("Conflict");
    expect((await call("DELETE", `/team/${a}/members/${w.owner.id}`, { key: w.owner.userKey })).status).toBe(409);

    expect((await call("PUT", `/team/${a}/members/${w.admin.id}`, { key: w.owner.userKey, body: { role: "OWNER" } })).status).toBe(200);
    expect((await call("DELETE", `/team/${a}/members/${w.owner.id}`, { key: w.admin.userKey })).status).toBe(204);
    const { members } = await json<{ members: Member[] }>(await call("GET", `/team/${a}/members`, { key: w.admin.userKey }));
    expect(members.map((m) => [m.userId, m.role]).sort()).toEqual(
      [
        [w.admin.id, "OWNER"],
        [w.member.id, "MEMBER"],
      ].sort(),
    );
  });

  it("two OWNERs demoting each other at the same moment leave the team with one OWNER", async () => {
    for (let round = 0; round < 3; round++) {
      const team = await createTeam();
      const [x, y] = [await createUser(), await createUser()];
      await addMember(team.id, x.id, "OWNER");
      await addMember(team.id, y.id, "OWNER");
      const results = await Promise.all([
        call("PUT", `/team/${team.id}/members/${y.id}`, { key: x.userKey, body: { role: "ADMIN" } }),
        call("DELETE", `/team/${team.id}/members/${x.id}`, { key: y.userKey }),
      ]);
      const owners = await env.DB.prepare("SELECT count(*) AS n FROM memberships WHERE team_id = ? AND role = 'OWNER'")
        .bind(team.id)
        .first<{ n: number }>();
      expect(owners?.n).toBe(1);
      // Whichever ran first succeeded; the other found its actor or its target changed (403/409).
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200 || s === 204)).toHaveLength(1);
      expect(statuses.filter((s) => s === 403 || s === 409)).toHaveLength(1);
    }
  });
});
