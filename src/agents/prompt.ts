import type { AgentConfig } from "../db/schema";

/**
 * The one place an agent's configuration becomes the model's system prompt. Sections appear
 * in a fixed order and empty ones are left out, so the result is predictable and inspectable
 * (GET /agent/:id shows it as renderedPrompt):
 *
 *   # Instructions   systemPrompt (or a one-line default naming the agent when it is empty)
 *   # Description    description
 *   # Notes          notes
 *   # Actions        actions, numbered 1., 2., ... in their order
 */
export function renderSystemPrompt(config: AgentConfig): string {
  const instructions = config.systemPrompt.trim() || `You are ${config.name}, a helpful assistant.`;
  const sections = [`# Instructions\n${instructions}`];
  if (config.description.trim()) sections.push(`# Description\n${config.description.trim()}`);
  if (config.notes.trim()) sections.push(`# Notes\n${config.notes.trim()}`);
  if (config.actions.length) sections.push(`# Actions\n${config.actions.map((a, i) => `${i + 1}. ${a.trim()}`).join("\n")}`);
  return sections.join("\n\n");
}

/** The service's routing prompt. Customisations go around it, never in place of it. */
export const DEFAULT_ROUTING_PROMPT = `You are a supervisor. Read the user's message and choose the ONE specialist below whose description best matches it.
Answer with the specialist's id only, exactly as written, and nothing else.`;

export type SubAgentSummary = { id: string; name: string; description: string; notes: string };

/**
 * A supervisor's routing prompt: [routing.before] + DEFAULT_ROUTING_PROMPT + the specialists
 * roster + [routing.after]. The default and the roster are always present; the team's text can
 * only add to them.
 */
export function renderRoutingPrompt(config: AgentConfig, subAgents: SubAgentSummary[]): string {
  const roster = subAgents
    .map((a) => `- id: ${a.id}\n  name: ${a.name}\n  description: ${a.description}${a.notes ? `\n  notes: ${a.notes}` : ""}`)
    .join("\n");
  const parts = [
    config.routing?.before?.trim(),
    DEFAULT_ROUTING_PROMPT,
    `# Specialists\n${roster || "(none)"}`,
    config.routing?.after?.trim(),
  ];
  return parts.filter((p): p is string => Boolean(p)).join("\n\n");
}
