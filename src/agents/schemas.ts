import { z } from "@hono/zod-openapi";
import { AGENT_TYPES } from "../db/schema";
import { DEFAULT_MODEL, modelErrorMessage, parseModel } from "../models/catalog";

/** Field length limits of an agent's configuration (README, section agents). */
export const LIMITS = {
  name: 100,
  description: 2000,
  systemPrompt: 20000,
  notes: 10000,
  actions: 50,
  action: 1000,
  tools: 50,
  tool: 100,
  subAgents: 20,
  routingText: 4000,
} as const;

export const DEFAULT_TEMPERATURE = 0.7;

const idString = z.string().min(1).max(100);

const Model = z
  .string()
  .max(200)
  .refine((m) => parseModel(m) !== null, { error: (issue) => modelErrorMessage(String(issue.input)) })
  .openapi({
    description: 'Model of a configured provider: "local" / "local:default" (embedded), "@cf/<model>" (Workers AI), "openai:<model>"',
    default: DEFAULT_MODEL,
    example: DEFAULT_MODEL,
  });

export const Routing = z
  .object({
    before: z.string().max(LIMITS.routingText).optional().openapi({ description: "Text placed before the default routing prompt" }),
    after: z.string().max(LIMITS.routingText).optional().openapi({ description: "Text placed after the default routing prompt" }),
  })
  .strict()
  .openapi("AgentRouting");

/** Every field of a configuration, all optional: create fills defaults, update merges onto the current one. */
const fields = {
  name: z.string().trim().min(1).max(LIMITS.name).openapi({ example: "Billing helper" }),
  description: z.string().max(LIMITS.description).openapi({ example: "Answers questions about invoices and refunds." }),
  systemPrompt: z.string().max(LIMITS.systemPrompt).openapi({ example: "You are a friendly billing assistant." }),
  notes: z.string().max(LIMITS.notes).openapi({ description: "Free text the agent keeps in mind", example: "Refunds take 5 days." }),
  actions: z
    .array(z.string().trim().min(1).max(LIMITS.action))
    .max(LIMITS.actions)
    .openapi({ description: "Ordered short instructions", example: ["Greet the user", "Ask for the invoice number"] }),
  model: Model,
  temperature: z.number().min(0).max(1).openapi({ default: DEFAULT_TEMPERATURE, example: 0.7 }),
  tools: z
    .array(z.string().min(1).max(LIMITS.tool))
    .max(LIMITS.tools)
    .openapi({ description: 'Enabled tools: "AgentKnowledgeTool"', example: ["AgentKnowledgeTool"] }),
  type: z.enum(AGENT_TYPES).openapi({ default: "specialist" }),
  subAgents: z
    .array(idString)
    .max(LIMITS.subAgents)
    .openapi({ description: "Supervisor only: ids of specialist agents of the same team (at least one)" }),
  routing: Routing.nullable().openapi({ description: "Supervisor only: customisation around the default routing prompt" }),
};

export const AgentInput = z
  .object({
    ...fields,
    description: fields.description.optional(),
    systemPrompt: fields.systemPrompt.optional(),
    notes: fields.notes.optional(),
    actions: fields.actions.optional(),
    model: fields.model.optional(),
    temperature: fields.temperature.optional(),
    tools: fields.tools.optional(),
    type: fields.type.optional(),
    subAgents: fields.subAgents.optional(),
    routing: fields.routing.optional(),
  })
  .strict()
  .openapi("AgentInput");

/** PUT is a partial update: fields present replace the current ones (arrays and routing as a whole). */
export const AgentUpdate = AgentInput.partial()
  .strict()
  .refine((v) => Object.keys(v).length > 0, { error: "give at least one field to change" })
  .openapi("AgentUpdate");

export type AgentInputT = z.infer<typeof AgentInput>;
export type AgentUpdateT = z.infer<typeof AgentUpdate>;

export const AgentIdParam = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
export const VersionParams = AgentIdParam.extend({
  n: z.coerce.number().int().min(1).max(1_000_000).openapi({ param: { name: "n", in: "path" }, type: "integer" }),
});
export const ListQuery = z.object({
  type: z.enum(AGENT_TYPES).optional().openapi({ param: { name: "type", in: "query" }, description: "Filter by agent type" }),
});

export const CreatedAgent = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    type: z.enum(AGENT_TYPES),
    teamId: z.string(),
    version: z.number().int(),
    createdAt: z.string(),
  })
  .openapi("CreatedAgent");

export const AgentListItem = z
  .object({ id: z.string(), name: z.string(), description: z.string(), type: z.enum(AGENT_TYPES), createdAt: z.string() })
  .openapi("AgentListItem");
export const AgentList = z.object({ agents: z.array(AgentListItem) }).openapi("AgentList");

const ConfigShape = z.object({
  name: z.string(),
  description: z.string(),
  systemPrompt: z.string(),
  notes: z.string(),
  actions: z.array(z.string()),
  model: z.string(),
  temperature: z.number(),
  tools: z.array(z.string()),
  type: z.enum(AGENT_TYPES),
  subAgents: z.array(z.string()),
  routing: z.object({ before: z.string().optional(), after: z.string().optional() }).nullable(),
});
export const AgentConfigSchema = ConfigShape.openapi("AgentConfig");

export const AgentDetail = ConfigShape.extend({
  id: z.string(),
  teamId: z.string(),
  subAgents: z.array(z.string()).openapi({ description: "Sub-agents that still exist as specialists of the team" }),
  version: z.number().int().openapi({ description: "The configuration version in force" }),
  latestVersion: z.number().int().openapi({ description: "The highest version written" }),
  createdAt: z.string(),
  updatedAt: z.string(),
  rolledBackAt: z.string().nullable().openapi({ description: "Time of the last rollback; null if never rolled back" }),
  renderedPrompt: z.string().openapi({ description: "The system prompt the model receives" }),
  renderedRoutingPrompt: z
    .string()
    .optional()
    .openapi({ description: "Supervisors only: the routing prompt (default with the customisation around it)" }),
}).openapi("Agent");

export const UpdatedAgent = z
  .object({ id: z.string(), name: z.string(), version: z.number().int(), updatedAt: z.string() })
  .openapi("UpdatedAgent");

export const RolledBackAgent = z
  .object({ id: z.string(), name: z.string(), version: z.number().int(), rolledBackAt: z.string() })
  .openapi("RolledBackAgent");

export const VersionSummary = z
  .object({
    version: z.number().int(),
    createdAt: z.string(),
    changes: z.array(z.string()).openapi({ description: "Fields that differ from the version numbered one lower" }),
    inForce: z.boolean(),
  })
  .openapi("AgentVersionSummary");
export const VersionList = z
  .object({ agentId: z.string(), version: z.number().int(), latestVersion: z.number().int(), versions: z.array(VersionSummary) })
  .openapi("AgentVersionList");

export const VersionDetail = VersionSummary.extend({ agentId: z.string(), config: AgentConfigSchema }).openapi("AgentVersion");
