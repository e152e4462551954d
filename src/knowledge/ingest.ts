import { and, eq, lt, ne } from "drizzle-orm";
import { createDb, type Database } from "../db/client";
import { files, knowledgeChunks } from "../db/schema";
import { commitWithEvents, type EventSink } from "../events/emit";
import { nowIso } from "../lib/ids";
import { chunkParagraphs } from "./chunk";
import { extractParagraphs } from "./extract";
import { acceptedExtension, ContentError } from "./file-types";

/** What the ingest queue carries: one ingestion run of one file. */
export type IngestJob = { fileId: string; teamId: string; ingestId: string };

/** A run still "processing" after this long is marked failed by the sweep (cron, every minute). */
export const INGEST_TIMEOUT_MINUTES = 15;

/** Rows per INSERT: 5 bound parameters each, D1 allows 100 per statement. */
const CHUNK_ROWS_PER_STATEMENT = 20;
/** INSERT statements per D1 batch (one round trip). */
const STATEMENTS_PER_BATCH = 50;

export const REASONS = {
  missing: "The uploaded file is no longer in storage. Upload it again.",
  repeated:
    "Ingestion failed repeatedly because of an internal error. Retry with POST /file/reindex; if it fails again, contact support.",
  timeout: `Ingestion did not finish within ${INGEST_TIMEOUT_MINUTES} minutes. Retry with POST /file/reindex, or split the file into smaller ones.`,
  noText: "The file contains no text.",
} as const;

type FileRow = typeof files.$inferSelect;

export function fileEventData(row: Pick<FileRow, "id" | "filename" | "agentId" | "size">) {
  return { fileId: row.id, filename: row.filename, agentId: row.agentId, size: row.size };
}

export async function enqueueIngestion(env: Env, job: IngestJob): Promise<void> {
  await env.INGEST.send(job, { contentType: "json" });
}

/** The current row of a job's run, or null when the file is gone or the run was superseded. */
async function currentRun(db: Database, job: IngestJob): Promise<FileRow | null> {
  const row = await db
    .select()
    .from(files)
    .where(and(eq(files.id, job.fileId), eq(files.teamId, job.teamId)))
    .get();
  if (!row || row.ingestId !== job.ingestId || row.status !== "processing") return null;
  return row;
}

/** Ends a run as failed with a reason for the user (only if it is still the file's current run). */
export async function markFailed(sink: EventSink, job: IngestJob, reason: string): Promise<boolean> {
  const row = await currentRun(sink.db, job);
  if (!row) return false;
  const now = nowIso();
  await commitWithEvents(
    sink,
    [
      sink.db
        .update(files)
        .set({ status: "failed", failureReason: reason, updatedAt: now })
        .where(and(eq(files.id, job.fileId), eq(files.ingestId, job.ingestId), eq(files.status, "processing"))),
      sink.db
        .delete(knowledgeChunks)
        .where(and(eq(knowledgeChunks.fileId, job.fileId), eq(knowledgeChunks.ingestId, job.ingestId))),
    ],
    [{ type: "file.failed", teamId: job.teamId, data: { ...fileEventData(row), reason } }],
  );
  return true;
}

async function insertChunks(env: Env, job: IngestJob, chunks: string[]): Promise<void> {
  const statements: D1PreparedStatement[] = [];
  for (let i = 0; i < chunks.length; i += CHUNK_ROWS_PER_STATEMENT) {
    const rows = chunks.slice(i, i + CHUNK_ROWS_PER_STATEMENT);
    const values = rows.map(() => "(?, ?, ?, ?, ?)").join(", ");
    const params = rows.flatMap((text, j) => [job.fileId, job.teamId, job.ingestId, i + j, text]);
    statements.push(
      env.DB.prepare(`INSERT INTO knowledge_chunks (file_id, team_id, ingest_id, seq, text) VALUES ${values}`).bind(...params),
    );
  }
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) {
    await env.DB.batch(statements.slice(i, i + STATEMENTS_PER_BATCH));
  }
}

export type IngestOutcome = "ready" | "failed" | "skipped";

/**
 * One ingestion run: read the object, extract, chunk, index, and mark the file ready (event
 * file.ready) or failed with the reason (event file.failed). A ContentError is the file's fault
 * and final; any other error is thrown so that the queue retries the run.
 */
export async function ingestFile(sink: EventSink, job: IngestJob): Promise<IngestOutcome> {
  const { env, db } = sink;
  const row = await currentRun(db, job);
  if (!row) return "skipped";
  const ext = acceptedExtension(row.filename);
  const object = await env.FILES.get(row.objectKey);
  if (!object) return (await markFailed(sink, job, REASONS.missing)) ? "failed" : "skipped";

  let chunks: string[];
  let textLength = 0;
  try {
    if (!ext) throw new ContentError("The file type is not accepted.");
    const paragraphs = await extractParagraphs(ext, new Uint8Array(await object.arrayBuffer()));
    textLength = paragraphs.reduce((n, p) => n + p.length, 0);
    chunks = chunkParagraphs(paragraphs);
    if (!chunks.length) throw new ContentError(REASONS.noText);
  } catch (err) {
    if (err instanceof ContentError) return (await markFailed(sink, job, err.message)) ? "failed" : "skipped";
    throw err;
  }

  // Leftovers of an earlier attempt of this run, and chunks of superseded runs.
  await env.DB.prepare(
    "DELETE FROM knowledge_chunks WHERE file_id = ?1 AND (ingest_id = ?2 OR ingest_id != (SELECT ingest_id FROM files WHERE id = ?1))",
  )
    .bind(job.fileId, job.ingestId)
    .run();
  await insertChunks(env, job, chunks);

  // Superseded meanwhile (re-upload, reindex, delete): the newer run owns the file.
  if (!(await currentRun(db, job))) {
    await db.delete(knowledgeChunks).where(and(eq(knowledgeChunks.fileId, job.fileId), eq(knowledgeChunks.ingestId, job.ingestId)));
    return "skipped";
  }
  const now = nowIso();
  await commitWithEvents(
    sink,
    [
      db
        .update(files)
        .set({ status: "ready", failureReason: null, chunkCount: chunks.length, textLength, updatedAt: now })
        .where(and(eq(files.id, job.fileId), eq(files.ingestId, job.ingestId), eq(files.status, "processing"))),
      db.delete(knowledgeChunks).where(and(eq(knowledgeChunks.fileId, job.fileId), ne(knowledgeChunks.ingestId, job.ingestId))),
    ],
    [{ type: "file.ready", teamId: job.teamId, data: { ...fileEventData(row), chunkCount: chunks.length } }],
  );
  return "ready";
}

function isJob(body: unknown): body is IngestJob {
  if (!body || typeof body !== "object") return false;
  const b = body as Record<string, unknown>;
  return typeof b.fileId === "string" && typeof b.teamId === "string" && typeof b.ingestId === "string";
}

/**
 * Consumer of agent-platform-ingest. Each message is acked or retried on its own; transient
 * errors are retried with a growing delay, and after max_retries (wrangler.toml) the message goes
 * to the dead-letter queue, whose consumer marks the file failed.
 */
export async function handleIngestBatch(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
  const sink: EventSink = { env, db: createDb(env.DB), waitUntil: (p) => ctx.waitUntil(p) };
  for (const message of batch.messages) {
    if (!isJob(message.body)) {
      console.error(JSON.stringify({ error: "malformed ingest message", id: message.id }));
      message.ack();
      continue;
    }
    try {
      const outcome = await ingestFile(sink, message.body);
      console.log(JSON.stringify({ ingest: outcome, fileId: message.body.fileId, attempt: message.attempts }));
      message.ack();
    } catch (err) {
      console.error(JSON.stringify({ error: "ingest failed", fileId: message.body.fileId, attempt: message.attempts, cause: String(err) }));
      message.retry({ delaySeconds: Math.min(5 * message.attempts, 60) });
    }
  }
}

/** Consumer of agent-platform-ingest-dlq: runs that failed every retry end as failed. */
export async function handleIngestDeadLetters(batch: MessageBatch<unknown>, env: Env, ctx: ExecutionContext): Promise<void> {
  const sink: EventSink = { env, db: createDb(env.DB), waitUntil: (p) => ctx.waitUntil(p) };
  for (const message of batch.messages) {
    try {
      if (isJob(message.body)) await markFailed(sink, message.body, REASONS.repeated);
      message.ack();
    } catch (err) {
      console.error(JSON.stringify({ error: "ingest dead letter not recorded", cause: String(err) }));
      message.retry({ delaySeconds: 30 });
    }
  }
}

/**
 * Cron sweep: runs still processing after INGEST_TIMEOUT_MINUTES (a lost message, a consumer
 * that crashed past its retries) become failed, so nothing stays "processing" forever.
 */
export async function sweepStuckIngestions(env: Env, now = new Date()): Promise<number> {
  const db = createDb(env.DB);
  const cutoff = new Date(now.getTime() - INGEST_TIMEOUT_MINUTES * 60_000).toISOString();
  const stuck = await db
    .select({ id: files.id, teamId: files.teamId, ingestId: files.ingestId })
    .from(files)
    .where(and(eq(files.status, "processing"), lt(files.ingestStartedAt, cutoff)))
    .limit(100)
    .all();
  const pending: Promise<unknown>[] = [];
  const sink: EventSink = { env, db, waitUntil: (p) => void pending.push(p) };
  let failed = 0;
  for (const job of stuck) {
    if (await markFailed(sink, { fileId: job.id, teamId: job.teamId, ingestId: job.ingestId }, REASONS.timeout)) failed++;
  }
  await Promise.allSettled(pending);
  return failed;
}

