import { createExecutionContext, createMessageBatch, createScheduledController, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { INGEST_TIMEOUT_MINUTES, REASONS, sweepStuckIngestions, type IngestJob } from "../../src/knowledge/ingest";
import { createWorld } from "../helpers/world";
import { listFiles, settled, text, upload, type FileView } from "./helpers";

/** A file parked in "processing" with a run the real consumer will never see. */
async function parkedFile(key: string, filename: string, startedAt = new Date().toISOString()): Promise<{ file: FileView; job: IngestJob }> {
  const file = (await (await upload(key, filename, text("Parked content for a test run."))).json()) as FileView;
  await settled(key, filename);
  const row = await env.DB.prepare("SELECT team_id AS teamId FROM files WHERE id = ?").bind(file.id).first<{ teamId: string }>();
  const job = { fileId: file.id, teamId: row!.teamId, ingestId: `ing_test_${crypto.randomUUID()}` };
  await env.DB.prepare("UPDATE files SET status = 'processing', ingest_id = ?, ingest_started_at = ? WHERE id = ?")
    .bind(job.ingestId, startedAt, file.id)
    .run();
  return { file, job };
}

const message = (body: unknown, attempts = 1) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts, body });

describe("ingest queue consumer", { timeout: 30_000 }, () => {
  it("indexes a job and acks it", async () => {
    const w = await createWorld();
    const { file, job } = await parkedFile(w.teamA.sk, "a.txt");
    const batch = createMessageBatch("agent-platform-ingest", [message(job)]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
    const [after] = await listFiles(w.teamA.sk);
    expect(after).toMatchObject({ id: file.id, status: "ready", chunkCount: 1 });
    const chunks = await env.DB.prepare("SELECT ingest_id AS ingestId FROM knowledge_chunks WHERE file_id = ?").bind(file.id).all<{ ingestId: string }>();
    expect(chunks.results).toEqual([{ ingestId: job.ingestId }]);
  });

  it("retries transient failures with a delay instead of failing the file", async () => {
    const w = await createWorld();
    const { file, job } = await parkedFile(w.teamA.sk, "b.txt");
    // Failure injection: the real bucket, with reads failing as during an R2 outage.
    const failingEnv = { ...env, FILES: new Proxy(env.FILES, { get: (t, p) => (p === "get" ? () => Promise.reject(new Error("R2 unavailable")) : Reflect.get(t, p)) }) };
    const batch = createMessageBatch("agent-platform-ingest", [message(job, 2)]);
    const ctx = createExecutionContext();
    await worker.queue(batch, failingEnv, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages.map((m) => m.msgId)).toEqual([batch.messages[0]!.id]);
    expect(result.explicitAcks).toEqual([]);
    expect((await listFiles(w.teamA.sk)).find((f) => f.id === file.id)?.status).toBe("processing");
  });

  it("skips superseded runs and acks malformed messages", async () => {
    const w = await createWorld();
    const { file, job } = await parkedFile(w.teamA.sk, "c.txt");
    const stale = { ...job, ingestId: "ing_old" };
    const batch = createMessageBatch("agent-platform-ingest", [message(stale), message({ hello: "world" })]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks).toHaveLength(2);
    expect((await listFiles(w.teamA.sk)).find((f) => f.id === file.id)?.status).toBe("processing");
    const n = await env.DB.prepare("SELECT count(*) AS n FROM knowledge_chunks WHERE ingest_id = 'ing_old'").first<{ n: number }>();
    expect(n?.n).toBe(0);
  });

  it("marks the file failed when its job reaches the dead-letter queue", async () => {
    const w = await createWorld();
    const { file, job } = await parkedFile(w.teamA.sk, "d.txt");
    const batch = createMessageBatch("agent-platform-ingest-dlq", [message(job, 4)]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toHaveLength(1);
    const after = (await listFiles(w.teamA.sk)).find((f) => f.id === file.id);
    expect(after).toMatchObject({ status: "failed", reason: REASONS.repeated });
    const event = await env.DB.prepare("SELECT data FROM events WHERE type = 'file.failed' AND team_id = ?").bind(w.teamA.id).first<{ data: string }>();
    expect(JSON.parse(event!.data)).toMatchObject({ fileId: file.id, reason: REASONS.repeated });
  });

  it("sweeps runs stuck in processing past the timeout, from the cron handler", async () => {
    const w = await createWorld();
    const old = new Date(Date.now() - (INGEST_TIMEOUT_MINUTES + 1) * 60_000).toISOString();
    const stuck = await parkedFile(w.teamA.sk, "stuck.txt", old);
    const fresh = await parkedFile(w.teamA.sk, "fresh.txt");
    await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env);
    const files = await listFiles(w.teamA.sk);
    expect(files.find((f) => f.id === stuck.file.id)).toMatchObject({ status: "failed", reason: REASONS.timeout });
    expect(files.find((f) => f.id === fresh.file.id)?.status).toBe("processing");
    expect(await sweepStuckIngestions(env)).toBe(0);
  });
});
