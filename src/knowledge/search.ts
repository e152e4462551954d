import { toFtsQuery } from "./fts";

/** A passage of a knowledge file, as AgentKnowledgeTool returns it and citations record it. */
export type KnowledgePassage = {
  fileId: string;
  filename: string;
  /** Whole sentences of the file, in their order (a chunk of the index). */
  text: string;
  /** Relevance (BM25, higher is better); comparable only within one search. */
  score: number;
};

export type KnowledgeQuery = {
  teamId: string;
  /** The asking agent: it sees the team's files associated with it or with no agent. */
  agentId: string;
  query: string;
  limit?: number;
};

export const DEFAULT_SEARCH_LIMIT = 5;
export const MAX_SEARCH_LIMIT = 20;

// The FTS index also holds team_id (bm25 weight 0) so that a search reads only its team's postings;
// the joins then keep the ready, current-ingestion chunks of the files in scope.
const searchSql = (agentScope: string) => `
SELECT c.file_id AS fileId, f.filename AS filename, c.text AS text, bm25(knowledge_fts, 1.0, 0.0) AS rank
FROM knowledge_fts
JOIN knowledge_chunks c ON c.id = knowledge_fts.rowid
JOIN files f ON f.id = c.file_id AND f.ingest_id = c.ingest_id
WHERE knowledge_fts MATCH ?1
  AND c.team_id = ?2 AND f.team_id = ?2
  AND f.status = 'ready'
  ${agentScope}
ORDER BY rank
LIMIT ?4`;
const AGENT_SQL = searchSql("AND (f.agent_id IS NULL OR f.agent_id = ?3)");
const TEAM_SQL = searchSql("AND ?3 IS NULL");

/** FTS5 string literal: double quotes doubled. */
const literal = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * Full-text search (SQLite FTS5, BM25) over the knowledge an agent may see: the team's ready
 * files that are associated with this agent or with no agent. Best passages first.
 */
export async function searchKnowledge(env: Env, query: KnowledgeQuery): Promise<KnowledgePassage[]> {
  return searchPassages(env, query);
}

/** As searchKnowledge; agentId null searches all of the team's files (GET /file/search). */
export async function searchPassages(
  env: Env,
  query: Omit<KnowledgeQuery, "agentId"> & { agentId: string | null },
): Promise<KnowledgePassage[]> {
  const terms = toFtsQuery(query.query);
  if (!terms) return [];
  const limit = Math.min(Math.max(Math.trunc(query.limit ?? DEFAULT_SEARCH_LIMIT), 1), MAX_SEARCH_LIMIT);
  const match = `team_id : ${literal(query.teamId)} AND text : (${terms})`;
  const { results } = await env.DB.prepare(query.agentId === null ? TEAM_SQL : AGENT_SQL)
    .bind(match, query.teamId, query.agentId, limit)
    .all<{ fileId: string; filename: string; text: string; rank: number }>();
  return results.map((r) => ({ fileId: r.fileId, filename: r.filename, text: r.text, score: -r.rank }));
}
