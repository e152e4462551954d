/** A passage of a knowledge file, as AgentKnowledgeTool returns it and citations record it. */
export type KnowledgePassage = {
  fileId: string;
  filename: string;
  text: string;
  score: number;
};

export type KnowledgeQuery = {
  teamId: string;
  /** The asking agent: it sees the team's files associated with it or with no agent. */
  agentId: string;
  query: string;
  limit?: number;
};

/**
 * Full-text search over the knowledge an agent may see.
 * Until the knowledge-files issue lands this finds nothing; callers must not care.
 */
export async function searchKnowledge(_env: Env, _query: KnowledgeQuery): Promise<KnowledgePassage[]> {
  return [];
}
