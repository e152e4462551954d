import { and, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { apiKeys, invitations, memberships, teams, users, type Role } from "../db/schema";
import { badRequest, conflict, forbidden, notFound } from "../http/errors";
import { generateKey } from "../keys/key-format";
import { sha256Hex } from "../lib/crypto";
import { newId, nowIso, randomString } from "../lib/ids";
import { forgetRole } from "./roles";

type TeamRow = typeof teams.$inferSelect;

const toTeam = (t: TeamRow) => ({
  id: t.id,
  name: t.name,
  metadata: t.metadata,
  createdAt: t.createdAt,
  updatedAt: t.updatedAt,
});

/** The caller becomes OWNER; team and membership are written in one batch. */
export async function createTeam(db: Database, userId: string, input: { name: string; metadata?: Record<string, string> }) {
  const now = nowIso();
  const team: TeamRow = { id: newId("team"), name: input.name, metadata: input.metadata ?? {}, createdAt: now, updatedAt: now };
  await db.batch([
    db.insert(teams).values(team),
    db.insert(memberships).values({ teamId: team.id, userId, role: "OWNER", createdAt: now }),
  ]);
  forgetRole(team.id, userId);
  return { ...toTeam(team), role: "OWNER" as Role };
}

/** Teams the user manages (OWNER or ADMIN), oldest first. */
export async function listManagedTeams(db: Database, userId: string) {
  const rows = await db
    .select({ team: teams, role: memberships.role })
    .from(memberships)
    .innerJoin(teams, eq(teams.id, memberships.teamId))
    .where(and(eq(memberships.userId, userId), inArray(memberships.role, ["OWNER", "ADMIN"])))
    .orderBy(teams.createdAt, teams.id);
  return rows.map((r) => ({ ...toTeam(r.team), role: r.role }));
}

export async function getTeamDetail(db: Database, teamId: string, role: Role) {
  const [team, members] = await db.batch([
    db.select().from(teams).where(eq(teams.id, teamId)),
    db
      .select({
        userId: users.id,
        email: users.email,
        name: users.name,
        role: memberships.role,
        joinedAt: memberships.createdAt,
      })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(eq(memberships.teamId, teamId))
      .orderBy(memberships.createdAt),
  ]);
  const row = team[0];
  if (!row) throw notFound("Team");
  return { ...toTeam(row), role, members };
}

export async function updateTeam(
  db: Database,
  teamId: string,
  role: Role,
  input: { name?: string; metadata?: Record<string, string> },
) {
  const [row] = await db
    .update(teams)
    .set({ ...input, updatedAt: nowIso() })
    .where(eq(teams.id, teamId))
    .returning();
  if (!row) throw notFound("Team");
  return { ...toTeam(row), role };
}

// ---- members -------------------------------------------------------------------------------

const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

/** ADMINs manage MEMBERs and ADMINs; only an OWNER may grant, change or remove OWNER. */
function assertMayManage(actorRole: Role, targetRole: Role, newRole?: Role) {
  if (actorRole !== "OWNER" && (targetRole === "OWNER" || newRole === "OWNER")) {
    throw forbidden("Only an OWNER can grant, change or remove the OWNER role.");
  }
}

export async function inviteMember(
  db: Database,
  teamId: string,
  actor: { userId: string; role: Role },
  input: { email: string; role: Role },
) {
  assertMayManage(actor.role, input.role);
  // Emails are stored and compared lower-case (users.email is unique as written).
  const email = input.email.toLowerCase();
  const existing = await db
    .select({ userId: users.id })
    .from(users)
    .innerJoin(memberships, and(eq(memberships.userId, users.id), eq(memberships.teamId, teamId)))
    .where(eq(users.email, email))
    .get();
  if (existing) throw conflict(`${email} is already a member of this team.`);

  const token = `inv_${randomString(40)}`;
  const row = {
    id: newId("inv"),
    teamId,
    email,
    role: input.role,
    tokenHash: await sha256Hex(token),
    invitedBy: actor.userId,
    expiresAt: new Date(Date.now() + INVITATION_TTL_MS).toISOString(),
    createdAt: nowIso(),
  };
  await db.insert(invitations).values(row);
  return { id: row.id, email, role: row.role, expiresAt: row.expiresAt, createdAt: row.createdAt, token };
}

export async function listInvitations(db: Database, teamId: string) {
  return db
    .select({
      id: invitations.id,
      email: invitations.email,
      role: invitations.role,
      expiresAt: invitations.expiresAt,
      createdAt: invitations.createdAt,
    })
    .from(invitations)
    .where(and(eq(invitations.teamId, teamId), isNull(invitations.acceptedAt), gt(invitations.expiresAt, nowIso())))
    .orderBy(invitations.createdAt);
}

export async function revokeInvitation(db: Database, teamId: string, invitationId: string) {
  const deleted = await db
    .delete(invitations)
    .where(and(eq(invitations.id, invitationId), eq(invitations.teamId, teamId), isNull(invitations.acceptedAt)))
    .returning({ id: invitations.id });
  if (!deleted.length) throw notFound("Invitation");
}

/**
 * The token is the invitee's credential. A new email gets a user and a user key (shown once);
 * an existing user just gains the membership. Single use: the accept is conditional on the
 * invitation still being open, in the same batch as the writes.
 */
export async function acceptInvitation(
  db: Database,
  input: { token: string; name?: string },
  retried = false,
): Promise<{ teamId: string; userId: string; role: Role; userKey?: string }> {
  const tokenHash = await sha256Hex(input.token);
  const invitation = await db.select().from(invitations).where(eq(invitations.tokenHash, tokenHash)).get();
  if (!invitation || invitation.acceptedAt || invitation.expiresAt <= nowIso()) throw invalidInvitation();
  const now = nowIso();
  const existingUser = await db.select({ id: users.id }).from(users).where(eq(users.email, invitation.email)).get();
  const userId = existingUser?.id ?? newId("user");
  const key = existingUser ? null : await generateKey("user");

  // One atomic batch: the claim, the user (if new) and the membership. A concurrent second
  // accept of the same token either fails on the unique email (new user) or finds the claim
  // already taken (existing user: its membership insert is then a no-op); both answer 400.
  const claim = db
    .update(invitations)
    .set({ acceptedAt: now })
    .where(and(eq(invitations.id, invitation.id), isNull(invitations.acceptedAt)))
    .returning({ id: invitations.id });
  const membership = db
    .insert(memberships)
    .values({ teamId: invitation.teamId, userId, role: invitation.role, createdAt: now })
    .onConflictDoNothing();
  if (key) {
    try {
      await db.batch([
        claim,
        db.insert(users).values({ id: userId, email: invitation.email, name: input.name ?? null, createdAt: now }),
        db.insert(apiKeys).values({
          id: newId("key"),
          type: "user",
          name: "Created on accepting an invitation",
          hash: key.hash,
          prefix: key.prefix,
          userId,
          createdAt: now,
        }),
        membership,
      ]);
    } catch (err) {
      // Either the token was accepted meanwhile, or the email became a user (another team's
      // invitation): then accept again as that existing user.
      const again = await db.select().from(invitations).where(eq(invitations.id, invitation.id)).get();
      if (!again || again.acceptedAt) throw invalidInvitation();
      const nowExists = await db.select({ id: users.id }).from(users).where(eq(users.email, invitation.email)).get();
      if (nowExists && !retried) return acceptInvitation(db, input, true);
      throw err;
    }
  } else {
    const [claimed] = await db.batch([claim, membership]);
    if (!claimed.length) throw invalidInvitation();
  }
  forgetRole(invitation.teamId, userId);
  return { teamId: invitation.teamId, userId, role: invitation.role, ...(key ? { userKey: key.plaintext } : {}) };
}

function invalidInvitation() {
  return badRequest("This invitation token is invalid, expired or already used.");
}

async function memberRole(db: Database, teamId: string, userId: string): Promise<Role> {
  const row = await db
    .select({ role: memberships.role })
    .from(memberships)
    .where(and(eq(memberships.teamId, teamId), eq(memberships.userId, userId)))
    .get();
  if (!row) throw notFound("Member");
  return row.role;
}

/**
 * The write's own condition (one statement, so atomic without a transaction): the member still
 * has the role the permission check saw, and an OWNER only loses that role while another OWNER
 * remains. Two OWNERs demoting each other at once can therefore never leave the team without one.
 */
function guardedMember(teamId: string, userId: string, current: Role) {
  return and(
    eq(memberships.teamId, teamId),
    eq(memberships.userId, userId),
    eq(memberships.role, current),
    current === "OWNER"
      ? sql`exists (select 1 from memberships o where o.team_id = ${teamId} and o.role = 'OWNER' and o.user_id <> ${userId})`
      : undefined,
  );
}

/** Why a guarded write changed nothing. */
async function guardFailure(db: Database, teamId: string, userId: string, expected: Role) {
  const role = await memberRole(db, teamId, userId);
  if (role === expected && expected === "OWNER") {
    return conflict("A team needs at least one OWNER: make someone else OWNER first.");
  }
  return conflict("The member's role changed meanwhile: read it again and retry.");
}

export async function changeMemberRole(db: Database, teamId: string, actorRole: Role, userId: string, role: Role) {
  const current = await memberRole(db, teamId, userId);
  assertMayManage(actorRole, current, role);
  if (current === role) return { userId, role };
  const updated = await db
    .update(memberships)
    .set({ role })
    .where(guardedMember(teamId, userId, current))
    .returning({ userId: memberships.userId });
  if (!updated.length) throw await guardFailure(db, teamId, userId, current);
  forgetRole(teamId, userId);
  return { userId, role };
}

export async function removeMember(db: Database, teamId: string, actorRole: Role, userId: string) {
  const current = await memberRole(db, teamId, userId);
  assertMayManage(actorRole, current);
  const deleted = await db
    .delete(memberships)
    .where(guardedMember(teamId, userId, current))
    .returning({ userId: memberships.userId });
  if (!deleted.length) throw await guardFailure(db, teamId, userId, current);
  forgetRole(teamId, userId);
}
