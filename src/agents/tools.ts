import type { Database } from "../db/client";

/** Tools built into the service. AgentKnowledgeTool searches the team's knowledge files. */
export const BUILTIN_TOOLS = ["AgentKnowledgeTool"] as const;

/** Context a tool source may need to decide whether a name is valid for this team. */
export type ToolContext = { db: Database; teamId: string };

/**
 * A family of tool names. `claims` says whether a name belongs to the family (cheap, no I/O);
 * `unknown` returns the claimed names that do not exist for the team. The MCP issue appends a
 * source that claims MCP configuration ids and checks them against the team's configurations.
 */
export type ToolSource = {
  claims: (name: string) => boolean;
  unknown: (ctx: ToolContext, names: string[]) => Promise<string[]>;
};

const builtin: ToolSource = {
  claims: (name) => (BUILTIN_TOOLS as readonly string[]).includes(name),
  unknown: async () => [],
};

export const TOOL_SOURCES: ToolSource[] = [builtin];

export type ToolIssue = { index: number; message: string };

/** The one validator of an agent's `tools`: duplicates and names no source knows are issues. */
export async function validateTools(ctx: ToolContext, tools: string[]): Promise<ToolIssue[]> {
  const issues: ToolIssue[] = [];
  const bySource = new Map<ToolSource, string[]>();
  tools.forEach((name, index) => {
    if (tools.indexOf(name) !== index) {
      issues.push({ index, message: `"${name}" is listed twice` });
      return;
    }
    const source = TOOL_SOURCES.find((s) => s.claims(name));
    if (!source) {
      issues.push({ index, message: `Unknown tool "${name}". Known tools: ${BUILTIN_TOOLS.join(", ")}` });
      return;
    }
    bySource.set(source, [...(bySource.get(source) ?? []), name]);
  });
  for (const [source, names] of bySource) {
    for (const missing of await source.unknown(ctx, names)) {
      issues.push({ index: tools.indexOf(missing), message: `"${missing}" does not exist in this team` });
    }
  }
  return issues.sort((a, b) => a.index - b.index);
}
