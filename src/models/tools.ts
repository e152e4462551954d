import { searchKnowledge } from "../knowledge/search";
import type { KnowledgePassage } from "../knowledge/search";
import type { ToolSpec } from "./types";

export const KNOWLEDGE_TOOL = "AgentKnowledgeTool";

/** Passages handed to the model per knowledge search. */
export const KNOWLEDGE_RESULT_LIMIT = 5;

export const knowledgeToolSpec: ToolSpec = {
  name: KNOWLEDGE_TOOL,
  description:
    "Search this agent's knowledge files (handbooks, FAQs, policies, product data) for passages relevant to a query. " +
    "Call it before answering any question about facts; answer from the passages it returns and name the file you quote.",
  parameters: {
    type: "object",
    properties: { query: { type: "string", description: "What to look for: the key words of the user's question" } },
    required: ["query"],
  },
};

/** One passage as the model sees it in a tool result. */
export type ToolPassage = { file: string; text: string };

/**
 * The knowledge tool's result, as the `content` of a tool turn: JSON so that every provider can read
 * it and the local model can parse it back.
 */
export function encodeKnowledgeResult(passages: KnowledgePassage[]): string {
  if (passages.length === 0) return JSON.stringify({ passages: [], note: "No relevant passages found in the knowledge files." });
  return JSON.stringify({ passages: passages.map((p) => ({ file: p.filename, text: p.text })) });
}

export function encodeToolError(message: string): string {
  return JSON.stringify({ error: message });
}

/** Passages of a knowledge tool result; a non-JSON result is taken as one passage of unknown origin. */
export function decodeKnowledgeResult(content: string): ToolPassage[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    return content.trim() ? [{ file: "", text: content }] : [];
  }
  if (!parsed || typeof parsed !== "object" || !("passages" in parsed) || !Array.isArray(parsed.passages)) return [];
  const out: ToolPassage[] = [];
  for (const p of parsed.passages as unknown[]) {
    if (p && typeof p === "object" && "text" in p && typeof p.text === "string") {
      const file = "file" in p && typeof p.file === "string" ? p.file : "";
      out.push({ file, text: p.text });
    }
  }
  return out;
}

/** A tool the loop can run for an agent. */
export type ToolRun = { content: string; passages: KnowledgePassage[] };

export type ToolContext = { env: Env; teamId: string; agentId: string };

type ToolImpl = { spec: ToolSpec; run: (ctx: ToolContext, args: Record<string, unknown>) => Promise<ToolRun> };

const IMPLEMENTATIONS: Record<string, ToolImpl> = {
  [KNOWLEDGE_TOOL]: {
    spec: knowledgeToolSpec,
    async run(ctx, args) {
      const query = typeof args.query === "string" ? args.query.trim() : "";
      if (!query) return { content: encodeToolError('The argument "query" (a non-empty string) is required.'), passages: [] };
      const passages = await searchKnowledge(ctx.env, {
        teamId: ctx.teamId,
        agentId: ctx.agentId,
        query: query.slice(0, 500),
        limit: KNOWLEDGE_RESULT_LIMIT,
      });
      return { content: encodeKnowledgeResult(passages), passages };
    },
  },
};

/**
 * The tools the loop offers for an agent's `tools` list. Names without an implementation here
 * (e.g. MCP configuration ids, until that issue adds them) are not offered.
 */
export function toolsFor(names: readonly string[]): ToolImpl[] {
  const seen = new Set<string>();
  const out: ToolImpl[] = [];
  for (const name of names) {
    const impl = IMPLEMENTATIONS[name];
    if (impl && !seen.has(name)) {
      seen.add(name);
      out.push(impl);
    }
  }
  return out;
}
