import { index, integer, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, teams } from "./teams";

export const AGENT_TYPES = ["specialist", "supervisor"] as const;
export type AgentType = (typeof AGENT_TYPES)[number];

/**
 * Everything that makes up an agent's behaviour. Each version stores one of these whole,
 * so a rollback restores exactly what was in force.
 */
export type AgentConfig = {
  name: string;
  description: string;
  systemPrompt: string;
  /** Free text the agent should keep in mind (prompt structure: description, notes, actions). */
  notes: string;
  /** Ordered short instructions. */
  actions: string[];
  model: string;
  temperature: number;
  /** Enabled tools: "AgentKnowledgeTool", later MCP configuration ids. */
  tools: string[];
  type: AgentType;
  /** Supervisor only: ids of specialist agents of the same team. */
  subAgents: string[];
  /** Supervisor only: text placed before and after the service's default routing prompt. */
  routing: { before?: string; after?: string } | null;
};

/** The agent as it is now: the configuration of the version in force, denormalised for reads. */
export const agents = sqliteTable(
  "agents",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    description: text("description").notNull(),
    type: text("type", { enum: AGENT_TYPES }).notNull(),
    config: text("config", { mode: "json" }).$type<AgentConfig>().notNull(),
    /** The version number in force. */
    version: integer("version").notNull(),
    /** The highest version number written; updates write latestVersion + 1. */
    latestVersion: integer("latest_version").notNull(),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
    rolledBackAt: text("rolled_back_at"),
  },
  (t) => [index("agents_team_idx").on(t.teamId, t.createdAt)],
);

/** Immutable configuration history: one row per create or update. */
export const agentVersions = sqliteTable(
  "agent_versions",
  {
    agentId: text("agent_id")
      .notNull()
      .references(() => agents.id, { onDelete: "cascade" }),
    version: integer("version").notNull(),
    teamId: text("team_id").notNull(),
    config: text("config", { mode: "json" }).$type<AgentConfig>().notNull(),
    /** Names of the fields that differ from the version before. */
    changes: text("changes", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.agentId, t.version] })],
);
