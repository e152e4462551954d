import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, teams } from "./teams";

export const FILE_STATUSES = ["processing", "ready", "failed"] as const;
export type FileStatus = (typeof FILE_STATUSES)[number];

/**
 * Knowledge files. A filename is unique within its team, so `?filename=` names one file and the
 * upload (staging) key derives from it. The confirmed bytes live at `objectKey` in R2 (FILES).
 *
 * agentId has no foreign key on purpose: when an agent is deleted its files keep the id and
 * become visible to no agent (never silently team-wide) until they are reassigned or deleted.
 *
 * Ingestion: `ingestId` names the current ingestion run. Chunks are written under it and search
 * only uses chunks of the file's current run, so a superseded run (re-upload, reindex) can never
 * mix its chunks in.
 */
export const files = sqliteTable(
  "files",
  {
    id: text("id").primaryKey(),
    teamId: text("team_id")
      .notNull()
      .references(() => teams.id, { onDelete: "cascade" }),
    agentId: text("agent_id"),
    filename: text("filename").notNull(),
    objectKey: text("object_key").notNull(),
    contentType: text("content_type").notNull(),
    size: integer("size").notNull(),
    etag: text("etag").notNull(),
    inputTokens: integer("input_tokens").notNull().default(0),
    outputTokens: integer("output_tokens").notNull().default(0),
    status: text("status", { enum: FILE_STATUSES }).notNull(),
    /** Human-readable, for status "failed". */
    failureReason: text("failure_reason"),
    ingestId: text("ingest_id").notNull(),
    /** When the current ingestion run was queued: the sweep fails runs older than the limit. */
    ingestStartedAt: text("ingest_started_at").notNull(),
    chunkCount: integer("chunk_count").notNull().default(0),
    /** Characters of extracted text of the last successful run. */
    textLength: integer("text_length").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: text("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("files_team_filename_unique").on(t.teamId, t.filename),
    index("files_team_agent_idx").on(t.teamId, t.agentId),
    index("files_status_idx").on(t.status, t.ingestStartedAt),
  ],
);

/**
 * Passages of extracted text. `id` is the rowid that the FTS5 index `knowledge_fts` (custom
 * migration: external content on this table, kept in sync by triggers) points at.
 */
export const knowledgeChunks = sqliteTable(
  "knowledge_chunks",
  {
    id: integer("id").primaryKey(),
    fileId: text("file_id")
      .notNull()
      .references(() => files.id, { onDelete: "cascade" }),
    teamId: text("team_id").notNull(),
    ingestId: text("ingest_id").notNull(),
    seq: integer("seq").notNull(),
    text: text("text").notNull(),
  },
  (t) => [index("knowledge_chunks_file_idx").on(t.fileId, t.ingestId, t.seq)],
);
