import { and, asc, eq } from "drizzle-orm";
import type { z } from "@hono/zod-openapi";
import type { Database } from "../db/client";
import { agents, files } from "../db/schema";
import { ApiError, badRequest, notFound } from "../http/errors";
import { newId, nowIso } from "../lib/ids";
import { verifyContent } from "../knowledge/extract/verify";
import { acceptedExtension, ACCEPTED_EXTENSIONS, CONTENT_TYPES, typeRefusal, type KnowledgeExtension } from "../knowledge/file-types";
import { enqueueIngestion } from "../knowledge/ingest";
import { searchPassages, type KnowledgePassage } from "../knowledge/search";
import { presign, s3Target } from "./presign";
import type { ConfirmUploadInput, FileRecord, FileUpdate, UploadUrlInput } from "./schemas";

/** Largest accepted knowledge file. Checked at confirm-upload from the stored object's size. */
export const MAX_FILE_BYTES = 25 * 1024 * 1024;

type FileRow = typeof files.$inferSelect;
type FileView = z.infer<typeof FileRecord>;

/**
 * Storage layout in R2 (FILES):
 * - uploads/<teamId>/<filename>: where the presigned PUT writes. It derives from the filename,
 *   which is unique per team, so confirm-upload (which names only the filename) finds it.
 * - files/<teamId>/<fileId>/<filename>: the confirmed bytes. Confirm copies the upload here after
 *   checking it, so a refused re-upload never destroys the file already in use.
 */
export const stagingKey = (teamId: string, filename: string) => `uploads/${teamId}/${filename}`;
const storageKey = (teamId: string, fileId: string, filename: string) => `files/${teamId}/${fileId}/${filename}`;

export function toView(row: FileRow): FileView {
  return {
    id: row.id,
    filename: row.filename,
    agentId: row.agentId,
    inputTokens: row.inputTokens,
    outputTokens: row.outputTokens,
    size: row.size,
    contentType: row.contentType,
    status: row.status,
    reason: row.status === "failed" ? row.failureReason : null,
    chunkCount: row.status === "ready" ? row.chunkCount : 0,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function requireType(filename: string): KnowledgeExtension {
  const ext = acceptedExtension(filename);
  if (!ext) throw badRequest(typeRefusal(filename), { acceptedTypes: [...ACCEPTED_EXTENSIONS] });
  return ext;
}

/** An agentId in a request must name an agent of the same team. */
async function requireAgent(db: Database, teamId: string, agentId: string): Promise<void> {
  const agent = await db
    .select({ id: agents.id })
    .from(agents)
    .where(and(eq(agents.id, agentId), eq(agents.teamId, teamId)))
    .get();
  if (!agent) throw notFound("Agent");
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export async function createUploadUrl(env: Env, db: Database, teamId: string, input: z.infer<typeof UploadUrlInput>, requestUrl: string) {
  requireType(input.filename);
  if (input.agentId) await requireAgent(db, teamId, input.agentId);
  const fileKey = stagingKey(teamId, input.filename);
  const { url, expiresAt } = await presign(s3Target(env, requestUrl), "PUT", fileKey);
  return { uploadUrl: url, fileKey, expiresAt, maxBytes: MAX_FILE_BYTES };
}

async function findByName(db: Database, teamId: string, filename: string): Promise<FileRow | undefined> {
  return db
    .select()
    .from(files)
    .where(and(eq(files.teamId, teamId), eq(files.filename, filename)))
    .get();
}

async function startIngestion(env: Env, db: Database, row: FileRow): Promise<FileRow> {
  try {
    await enqueueIngestion(env, { fileId: row.id, teamId: row.teamId, ingestId: row.ingestId });
    return row;
  } catch (err) {
    console.error(JSON.stringify({ error: "ingest enqueue failed", fileId: row.id, cause: String(err) }));
    const failed = {
      status: "failed" as const,
      failureReason: "The ingestion could not be started. Retry with POST /file/reindex.",
      updatedAt: nowIso(),
    };
    await db.update(files).set(failed).where(and(eq(files.id, row.id), eq(files.ingestId, row.ingestId)));
    return { ...row, ...failed };
  }
}

/**
 * Confirm an upload: the object must exist at the upload key; it is checked (size, type, content),
 * moved to the file's storage key and recorded, and ingestion is queued. The first confirm creates
 * the file (created: true). Confirming again without a new upload returns the same file unchanged;
 * confirming after a new upload to the same filename replaces the content and re-ingests it.
 */
export async function confirmUpload(
  env: Env,
  db: Database,
  teamId: string,
  input: z.infer<typeof ConfirmUploadInput>,
): Promise<{ file: FileView; created: boolean }> {
  const ext = requireType(input.filename);
  if (input.agentId) await requireAgent(db, teamId, input.agentId);
  const upload = stagingKey(teamId, input.filename);
  const existing = await findByName(db, teamId, input.filename);

  const head = await env.FILES.head(upload);
  if (!head) {
    if (existing) return { file: toView(existing), created: false };
    throw new ApiError(404, "No uploaded object for this filename: PUT the file to the uploadUrl of POST /upload-url first (URLs expire).");
  }
  if (head.size > MAX_FILE_BYTES) {
    await env.FILES.delete(upload);
    throw new ApiError(413, `The file is ${megabytes(head.size)}; the largest accepted file is ${megabytes(MAX_FILE_BYTES)}.`, {
      maxBytes: MAX_FILE_BYTES,
    });
  }
  const object = await env.FILES.get(upload);
  if (!object) throw new ApiError(404, "The uploaded object disappeared while it was being confirmed. Upload it again.");
  const bytes = new Uint8Array(await object.arrayBuffer());
  const refusal = verifyContent(ext, bytes);
  if (refusal) {
    await env.FILES.delete(upload);
    throw badRequest(refusal);
  }

  const now = nowIso();
  const httpMetadata = {
    contentType: CONTENT_TYPES[ext],
    contentDisposition: `attachment; filename*=UTF-8''${encodeURIComponent(input.filename)}`,
  };
  const run = { ingestId: newId("ing"), ingestStartedAt: now, status: "processing" as const, failureReason: null };

  if (existing) {
    await env.FILES.put(existing.objectKey, bytes, { httpMetadata });
    const changes = {
      ...run,
      size: bytes.length,
      etag: object.etag,
      contentType: CONTENT_TYPES[ext],
      ...(input.agentId !== undefined && { agentId: input.agentId }),
      ...(input.inputTokens !== undefined && { inputTokens: input.inputTokens }),
      ...(input.outputTokens !== undefined && { outputTokens: input.outputTokens }),
      updatedAt: now,
    };
    await db.update(files).set(changes).where(eq(files.id, existing.id));
    await env.FILES.delete(upload);
    return { file: toView(await startIngestion(env, db, { ...existing, ...changes })), created: false };
  }

  const id = newId("file");
  const row: FileRow = {
    id,
    teamId,
    agentId: input.agentId ?? null,
    filename: input.filename,
    objectKey: storageKey(teamId, id, input.filename),
    contentType: CONTENT_TYPES[ext],
    size: bytes.length,
    etag: object.etag,
    inputTokens: input.inputTokens ?? 0,
    outputTokens: input.outputTokens ?? 0,
    ...run,
    chunkCount: 0,
    textLength: 0,
    createdAt: now,
    updatedAt: now,
  };
  await env.FILES.put(row.objectKey, bytes, { httpMetadata });
  try {
    await db.insert(files).values(row);
  } catch (err) {
    // A concurrent confirm of the same filename won the unique index: answer with its file.
    await env.FILES.delete(row.objectKey);
    const winner = await findByName(db, teamId, input.filename);
    if (winner) return { file: toView(winner), created: false };
    throw err;
  }
  await env.FILES.delete(upload);
  return { file: toView(await startIngestion(env, db, row)), created: true };
}

export async function listFiles(db: Database, teamId: string, agentId?: string): Promise<FileView[]> {
  const where = agentId ? and(eq(files.teamId, teamId), eq(files.agentId, agentId)) : eq(files.teamId, teamId);
  const rows = await db.select().from(files).where(where).orderBy(asc(files.createdAt), asc(files.id)).all();
  return rows.map(toView);
}

export type FileSelector = { filename?: string; id?: string };

/** The team's file named by ?filename= (or ?id=); 404 when the team has none. */
export async function requireFile(db: Database, teamId: string, selector: FileSelector): Promise<FileRow> {
  let row: FileRow | undefined;
  if (selector.filename) row = await findByName(db, teamId, selector.filename);
  else if (selector.id) {
    row = await db
      .select()
      .from(files)
      .where(and(eq(files.teamId, teamId), eq(files.id, selector.id)))
      .get();
  } else {
    throw badRequest("Name the file with the query parameter filename (or id).");
  }
  if (!row) throw notFound("File");
  return row;
}

export async function updateFile(db: Database, teamId: string, filename: string, input: z.infer<typeof FileUpdate>) {
  const row = await requireFile(db, teamId, { filename });
  if (input.agentId) await requireAgent(db, teamId, input.agentId);
  const changes = {
    ...(input.agentId !== undefined && { agentId: input.agentId }),
    ...(input.inputTokens !== undefined && { inputTokens: input.inputTokens }),
    ...(input.outputTokens !== undefined && { outputTokens: input.outputTokens }),
    updatedAt: nowIso(),
  };
  await db.update(files).set(changes).where(and(eq(files.id, row.id), eq(files.teamId, teamId)));
  return toView({ ...row, ...changes });
}

export async function createDownloadUrl(
  env: Env,
  db: Database,
  teamId: string,
  query: { filename?: string; name?: string; agentId?: string },
  requestUrl: string,
) {
  const filename = query.filename ?? query.name;
  if (!filename) throw badRequest("Name the file with the query parameter filename (or name).");
  const row = await requireFile(db, teamId, { filename });
  // With agentId the caller asks for that agent's file: another agent's (or a team-wide) file is not it.
  if (query.agentId !== undefined && row.agentId !== query.agentId) throw notFound("File");
  return presign(s3Target(env, requestUrl), "GET", row.objectKey);
}

/** Removes the record, its indexed passages (cascade + FTS triggers) and the stored objects. */
export async function deleteFile(env: Env, db: Database, teamId: string, selector: FileSelector): Promise<void> {
  const row = await requireFile(db, teamId, selector);
  await db.delete(files).where(and(eq(files.id, row.id), eq(files.teamId, teamId)));
  await env.FILES.delete([row.objectKey, stagingKey(teamId, row.filename)]);
}

/** Starts a new ingestion run (a failed one, or a re-run); a run in progress is superseded. */
export async function reindexFile(env: Env, db: Database, teamId: string, selector: FileSelector): Promise<FileView> {
  const row = await requireFile(db, teamId, selector);
  const now = nowIso();
  const changes = { ingestId: newId("ing"), ingestStartedAt: now, status: "processing" as const, failureReason: null, updatedAt: now };
  await db.update(files).set(changes).where(and(eq(files.id, row.id), eq(files.teamId, teamId)));
  return toView(await startIngestion(env, db, { ...row, ...changes }));
}

/** GET /file/search: what AgentKnowledgeTool would find for an agent, or in all the team's files. */
export async function searchFiles(
  env: Env,
  db: Database,
  teamId: string,
  query: { query: string; agentId?: string; limit?: number },
): Promise<KnowledgePassage[]> {
  if (query.agentId) await requireAgent(db, teamId, query.agentId);
  return searchPassages(env, { teamId, agentId: query.agentId ?? null, query: query.query, limit: query.limit });
}
