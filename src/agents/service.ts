import { and, asc, eq, inArray, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { agentVersions, agents, type AgentConfig, type AgentType } from "../db/schema";
import { commitWithEvents, type EventSink } from "../events/emit";
import { ApiError, conflict, notFound } from "../http/errors";
import { newId, nowIso } from "../lib/ids";
import { DEFAULT_MODEL } from "../models/catalog";
import { renderRoutingPrompt, renderSystemPrompt, type SubAgentSummary } from "./prompt";
import { DEFAULT_TEMPERATURE, type AgentInputT, type AgentUpdateT } from "./schemas";
import { validateTools } from "./tools";

type AgentRow = typeof agents.$inferSelect;

/** Field order of a configuration: diffs and the versions list name fields in this order. */
const CONFIG_FIELDS = [
  "name",
  "description",
  "systemPrompt",
  "notes",
  "actions",
  "model",
  "temperature",
  "tools",
  "type",
  "subAgents",
  "routing",
] as const satisfies readonly (keyof AgentConfig)[];

const DEFAULTS: Omit<AgentConfig, "name"> = {
  description: "",
  systemPrompt: "",
  notes: "",
  actions: [],
  model: DEFAULT_MODEL,
  temperature: DEFAULT_TEMPERATURE,
  tools: [],
  type: "specialist",
  subAgents: [],
  routing: null,
};

/** Optimistic-concurrency attempts for one update or rollback before giving up with a 409. */
const MAX_ATTEMPTS = 25;

// ---- configuration -------------------------------------------------------------------------

/** Empty customisations are no customisation; key order fixed so that equal configs compare equal. */
function normalizeRouting(routing: AgentConfig["routing"] | undefined): AgentConfig["routing"] {
  if (!routing) return null;
  const out: { before?: string; after?: string } = {};
  if (routing.before?.trim()) out.before = routing.before;
  if (routing.after?.trim()) out.after = routing.after;
  return out.before === undefined && out.after === undefined ? null : out;
}

/** A stored config with every field present (defensive against rows written by older code). */
function complete(config: AgentConfig): AgentConfig {
  const merged: AgentConfig = { ...DEFAULTS, ...config, routing: normalizeRouting(config.routing) };
  return Object.fromEntries(CONFIG_FIELDS.map((f) => [f, merged[f]])) as AgentConfig;
}

function configFromInput(input: AgentInputT): AgentConfig {
  const config: AgentConfig = { ...DEFAULTS, name: input.name };
  for (const field of CONFIG_FIELDS) {
    const value = input[field];
    if (value !== undefined) Object.assign(config, { [field]: value });
  }
  return complete(config);
}

/**
 * PUT semantics: fields present replace the current ones; arrays and routing are replaced as a
 * whole; `routing: null` removes the customisation. Turning an agent into a specialist without
 * naming subAgents/routing drops them, since specialists have neither.
 */
export function mergeConfig(current: AgentConfig, input: AgentUpdateT): AgentConfig {
  const next: AgentConfig = { ...current };
  for (const field of CONFIG_FIELDS) {
    const value = input[field];
    if (value !== undefined) Object.assign(next, { [field]: value });
  }
  if (input.type === "specialist") {
    if (input.subAgents === undefined) next.subAgents = [];
    if (input.routing === undefined) next.routing = null;
  }
  return complete(next);
}

/** Names of the fields that differ between two configurations. */
export function diffConfig(before: AgentConfig, after: AgentConfig): string[] {
  return CONFIG_FIELDS.filter((f) => JSON.stringify(before[f]) !== JSON.stringify(after[f]));
}

type FieldIssue = { field: string; message: string };

/** Same shape as the automatic validation 400 (src/http/validation.ts). */
function invalidBody(issues: FieldIssue[]): ApiError {
  const summary = issues.map((i) => `${i.field}: ${i.message}`).join("; ");
  return new ApiError(400, `Invalid body: ${summary}`, { fields: issues });
}

/**
 * Checks that need the database or more than one field: tools exist, the type/subAgents/routing
 * combination, and every sub-agent is a specialist of this team other than the agent itself.
 */
async function validateConfig(db: Database, teamId: string, selfId: string | null, config: AgentConfig) {
  const issues: FieldIssue[] = [];

  for (const issue of await validateTools({ db, teamId }, config.tools)) {
    issues.push({ field: `tools.${issue.index}`, message: issue.message });
  }

  if (config.type === "specialist") {
    if (config.subAgents.length) {
      issues.push({ field: "subAgents", message: "only supervisor agents have sub-agents (set type to supervisor)" });
    }
    if (config.routing) {
      issues.push({ field: "routing", message: "only supervisor agents have a routing customisation" });
    }
  } else {
    if (!config.subAgents.length) {
      issues.push({ field: "subAgents", message: "a supervisor needs at least one sub-agent" });
    }
    const found = config.subAgents.length
      ? await db
          .select({ id: agents.id, type: agents.type })
          .from(agents)
          .where(and(eq(agents.teamId, teamId), inArray(agents.id, config.subAgents)))
      : [];
    const typeOf = new Map(found.map((a) => [a.id, a.type]));
    config.subAgents.forEach((id, index) => {
      const field = `subAgents.${index}`;
      if (config.subAgents.indexOf(id) !== index) issues.push({ field, message: `"${id}" is listed twice` });
      else if (id === selfId) issues.push({ field, message: "an agent cannot be its own sub-agent" });
      else if (!typeOf.has(id)) issues.push({ field, message: `"${id}" is not an agent of this team` });
      else if (typeOf.get(id) !== "specialist") {
        issues.push({ field, message: `"${id}" is a supervisor; sub-agents must be specialists` });
      }
    });
    if (selfId) {
      const parent = await supervisorsOf(db, teamId, selfId);
      if (parent.length) {
        issues.push({
          field: "type",
          message: `this agent is a sub-agent of supervisor ${parent.join(", ")}; remove it there before making it a supervisor`,
        });
      }
    }
  }

  if (issues.length) throw invalidBody(issues);
}

/** Supervisors of the team whose configuration names `agentId` as a sub-agent. */
async function supervisorsOf(db: Database, teamId: string, agentId: string): Promise<string[]> {
  const rows = await db
    .select({ id: agents.id })
    .from(agents)
    .where(
      and(
        eq(agents.teamId, teamId),
        eq(agents.type, "supervisor"),
        sql`EXISTS (SELECT 1 FROM json_each(${agents.config}, '$.subAgents') WHERE value = ${agentId})`,
      ),
    );
  return rows.map((r) => r.id);
}

// ---- reads ---------------------------------------------------------------------------------

async function findRow(db: Database, teamId: string, id: string): Promise<AgentRow | undefined> {
  return db
    .select()
    .from(agents)
    .where(and(eq(agents.id, id), eq(agents.teamId, teamId)))
    .get();
}

/**
 * The sub-agents of a supervisor that still exist as specialists of the team, in configured
 * order. Deleted (or since re-typed) sub-agents are dropped here, on read.
 */
/**
 * The sub-agents that still exist as specialists of this team, in the supervisor's order: deleted
 * ones are dropped. Used by reads here and by the chat runtime when it routes a message.
 */
export async function liveSubAgents(db: Database, teamId: string, ids: string[]) {
  if (!ids.length) return [];
  const rows = await db
    .select({ id: agents.id, teamId: agents.teamId, type: agents.type, name: agents.name, config: agents.config })
    .from(agents)
    .where(and(eq(agents.teamId, teamId), inArray(agents.id, ids)));
  const byId = new Map(rows.filter((r) => r.type === "specialist").map((r) => [r.id, r]));
  return ids.flatMap((id) => {
    const row = byId.get(id);
    return row ? [{ ...row, config: complete(row.config) }] : [];
  });
}

export async function resolveSubAgents(db: Database, teamId: string, ids: string[]): Promise<SubAgentSummary[]> {
  return (await liveSubAgents(db, teamId, ids)).map(({ id, config }) => ({
    id,
    name: config.name,
    description: config.description,
    notes: config.notes,
  }));
}

export async function getAgent(db: Database, teamId: string, id: string) {
  const row = await findRow(db, teamId, id);
  if (!row) throw notFound("Agent");
  const config = complete(row.config);
  const subAgents = config.type === "supervisor" ? await resolveSubAgents(db, teamId, config.subAgents) : [];
  return {
    id: row.id,
    teamId: row.teamId,
    ...config,
    subAgents: subAgents.map((s) => s.id),
    version: row.version,
    latestVersion: row.latestVersion,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    rolledBackAt: row.rolledBackAt,
    renderedPrompt: renderSystemPrompt(config),
    ...(config.type === "supervisor" ? { renderedRoutingPrompt: renderRoutingPrompt(config, subAgents) } : {}),
  };
}

export async function listAgents(db: Database, teamId: string, type?: AgentType) {
  const rows = await db
    .select({ id: agents.id, name: agents.name, description: agents.description, type: agents.type, createdAt: agents.createdAt })
    .from(agents)
    .where(type ? and(eq(agents.teamId, teamId), eq(agents.type, type)) : eq(agents.teamId, teamId))
    .orderBy(asc(agents.createdAt), asc(agents.id));
  return { agents: rows };
}

export async function listVersions(db: Database, teamId: string, id: string) {
  const [rows, versions] = await db.batch([
    db.select().from(agents).where(and(eq(agents.id, id), eq(agents.teamId, teamId))),
    db
      .select({ version: agentVersions.version, createdAt: agentVersions.createdAt, changes: agentVersions.changes })
      .from(agentVersions)
      .where(and(eq(agentVersions.agentId, id), eq(agentVersions.teamId, teamId)))
      .orderBy(asc(agentVersions.version)),
  ]);
  const row = rows[0];
  if (!row) throw notFound("Agent");
  return {
    agentId: id,
    version: row.version,
    latestVersion: row.latestVersion,
    versions: versions.map((v) => ({ ...v, inForce: v.version === row.version })),
  };
}

export async function getVersion(db: Database, teamId: string, id: string, n: number) {
  const [rows, versions] = await db.batch([
    db.select({ version: agents.version }).from(agents).where(and(eq(agents.id, id), eq(agents.teamId, teamId))),
    db
      .select()
      .from(agentVersions)
      .where(and(eq(agentVersions.agentId, id), eq(agentVersions.teamId, teamId), eq(agentVersions.version, n))),
  ]);
  const agent = rows[0];
  if (!agent) throw notFound("Agent");
  const v = versions[0];
  if (!v) throw notFound(`Version ${n} of this agent`);
  return {
    agentId: id,
    version: v.version,
    createdAt: v.createdAt,
    changes: v.changes,
    inForce: v.version === agent.version,
    config: complete(v.config),
  };
}

// ---- writes --------------------------------------------------------------------------------

function eventData(row: Pick<AgentRow, "id" | "name" | "description" | "type" | "teamId">, extra: Record<string, unknown>) {
  return { id: row.id, name: row.name, description: row.description, type: row.type, teamId: row.teamId, ...extra };
}

/** Agent row and version 1 in one batch, with its agent.updated event. */
export async function createAgent(sink: EventSink, teamId: string, input: AgentInputT) {
  const config = configFromInput(input);
  await validateConfig(sink.db, teamId, null, config);
  const now = nowIso();
  const row: AgentRow = {
    id: newId("agt"),
    teamId,
    name: config.name,
    description: config.description,
    type: config.type,
    config,
    version: 1,
    latestVersion: 1,
    createdAt: now,
    updatedAt: now,
    rolledBackAt: null,
  };
  const changes = [...CONFIG_FIELDS];
  await commitWithEvents(
    sink,
    [
      sink.db.insert(agents).values(row),
      sink.db.insert(agentVersions).values({ agentId: row.id, version: 1, teamId, config, changes, createdAt: now }),
    ],
    [{ type: "agent.updated", teamId, data: eventData(row, { version: 1, changes, createdAt: now, updatedAt: now }) }],
  );
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    teamId,
    version: 1,
    createdAt: now,
  };
}

/** A write lost a race (a unique or NOT NULL guard of the batch failed): read again and retry. */
function isWriteConflict(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (/constraint failed|SQLITE_CONSTRAINT/i.test(String((e as Error).message ?? e))) return true;
  }
  return false;
}

async function backoff(attempt: number) {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * (attempt + 1)));
}

const raceLost = () =>
  conflict("The agent is being changed by many requests at once and this change could not be applied; retry.");

/** Returned by an attempt whose read saw another writer mid-way: read again at once. */
const STALE = Symbol("stale");

/**
 * Optimistic concurrency for agent writes: `attempt` reads the state and writes conditioned on it;
 * a lost race fails the batch on a constraint, and the attempt runs again on fresh state.
 */
async function retryOnConflict<T>(attempt: () => Promise<T | typeof STALE>): Promise<T> {
  for (let n = 0; n < MAX_ATTEMPTS; n++) {
    try {
      const result = await attempt();
      if (result !== STALE) return result;
    } catch (err) {
      if (!isWriteConflict(err)) throw err;
      await backoff(n);
    }
  }
  throw raceLost();
}

/**
 * A new version on top of the latest, made current. Optimistic concurrency: the agent UPDATE
 * only applies if the row is still in the state we read (version and latestVersion), and the
 * version INSERT takes its number from the row it just updated: if our UPDATE did not apply,
 * the number is NULL (NOT NULL fails) or a number another writer already used (primary key
 * fails), so the whole batch, events included, rolls back and we retry on fresh state.
 */
export async function updateAgent(sink: EventSink, teamId: string, id: string, input: AgentUpdateT) {
  const { db } = sink;
  return retryOnConflict(async () => {
    const [rows, latest] = await db.batch([
      db.select().from(agents).where(and(eq(agents.id, id), eq(agents.teamId, teamId))),
      db
        .select({ version: agentVersions.version, config: agentVersions.config })
        .from(agentVersions)
        .where(
          and(
            eq(agentVersions.agentId, id),
            eq(agentVersions.teamId, teamId),
            sql`${agentVersions.version} = (SELECT ${agents.latestVersion} FROM ${agents} WHERE ${agents.id} = ${id})`,
          ),
        ),
    ]);
    const row = rows[0];
    if (!row) throw notFound("Agent");
    const previous = latest[0];
    // Read between two batches of a concurrent writer? Impossible in one batch; guard anyway.
    if (!previous || previous.version !== row.latestVersion) return STALE;

    const config = mergeConfig(complete(row.config), input);
    if (config.type === "supervisor" && input.subAgents === undefined) {
      // Kept sub-agents that were deleted since are dropped, as reads already do.
      config.subAgents = (await resolveSubAgents(db, teamId, config.subAgents)).map((s) => s.id);
    }
    await validateConfig(db, teamId, id, config);
    const next = row.latestVersion + 1;
    const changes = diffConfig(complete(previous.config), config);
    const now = nowIso();
    await commitWithEvents(
      sink,
      [
        db
          .update(agents)
          .set({
            name: config.name,
            description: config.description,
            type: config.type,
            config,
            version: next,
            latestVersion: next,
            updatedAt: now,
          })
          .where(
            and(
              eq(agents.id, id),
              eq(agents.teamId, teamId),
              eq(agents.version, row.version),
              eq(agents.latestVersion, row.latestVersion),
            ),
          ),
        db.insert(agentVersions).values({
          agentId: id,
          version: sql`(SELECT ${agents.latestVersion} FROM ${agents} WHERE ${agents.id} = ${id} AND ${agents.version} = ${next} AND ${agents.latestVersion} = ${next})`,
          teamId,
          config,
          changes,
          createdAt: now,
        }),
      ],
      [
        {
          type: "agent.updated",
          teamId,
          data: eventData({ ...row, ...config }, { version: next, changes, createdAt: row.createdAt, updatedAt: now }),
        },
      ],
    );
    return { id, name: config.name, version: next, updatedAt: now };
  });
}

/**
 * Makes version (in force - 1) current again. "Previous" is by number in the history: after
 * v1..v3 and a rollback to v2, an update writes v4, and rolling back from v4 restores v3.
 * The UPDATE is conditioned on the state read; the guard INSERT after it fails the batch
 * (NOT NULL) when the UPDATE changed no row, so a lost race emits no event and is retried.
 */
export async function rollbackAgent(sink: EventSink, teamId: string, id: string) {
  const { db } = sink;
  return retryOnConflict(async () => {
    const row = await findRow(db, teamId, id);
    if (!row) throw notFound("Agent");
    const target = row.version - 1;
    if (target < 1) {
      throw conflict(
        `Agent ${id} is at version ${row.version}, its first version: there is no earlier version to roll back to.`,
        { version: row.version },
      );
    }
    const saved = await db
      .select({ config: agentVersions.config })
      .from(agentVersions)
      .where(and(eq(agentVersions.agentId, id), eq(agentVersions.teamId, teamId), eq(agentVersions.version, target)))
      .get();
    if (!saved) return STALE;
    const config = complete(saved.config);
    const now = nowIso();
    await commitWithEvents(
      sink,
      [
        db
          .update(agents)
          .set({
            name: config.name,
            description: config.description,
            type: config.type,
            config,
            version: target,
            updatedAt: now,
            rolledBackAt: now,
          })
          .where(
            and(
              eq(agents.id, id),
              eq(agents.teamId, teamId),
              eq(agents.version, row.version),
              eq(agents.latestVersion, row.latestVersion),
            ),
          ),
        // changes() is the row count of the UPDATE just before, in the same batch. (No bound
        // parameters: drizzle's D1 batch cannot bind those of a raw statement.)
        db.run(sql`INSERT INTO agent_versions (agent_id, version, team_id, config, changes)
          SELECT NULL, NULL, NULL, NULL, NULL WHERE changes() = 0`),
      ],
      [
        {
          type: "agent.rolled_back",
          teamId,
          data: eventData(
            { ...row, ...config },
            { version: target, fromVersion: row.version, rolledBackAt: now, updatedAt: now },
          ),
        },
      ],
    );
    return { id, name: config.name, version: target, rolledBackAt: now };
  });
}

/** Removes the agent; its versions go with it (foreign key cascade). */
export async function deleteAgent(db: Database, teamId: string, id: string) {
  const deleted = await db
    .delete(agents)
    .where(and(eq(agents.id, id), eq(agents.teamId, teamId)))
    .returning({ id: agents.id });
  if (!deleted.length) throw notFound("Agent");
}
