import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { call, json } from "../helpers/world";

/** The bytes of a file of test/fixtures/knowledge (carried in by vitest.config.ts). */
export function fixture(name: string): Uint8Array {
  const b64 = env.TEST_FIXTURES[name];
  if (b64 === undefined) throw new Error(`no fixture ${name}`);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

export const text = (s: string) => new TextEncoder().encode(s);

export type FileView = {
  id: string;
  filename: string;
  agentId: string | null;
  inputTokens: number;
  outputTokens: number;
  size: number;
  status: "processing" | "ready" | "failed";
  reason: string | null;
  chunkCount: number;
  createdAt: string;
  updatedAt: string;
};

/**
 * The client's upload flow: POST /upload-url, PUT the bytes, POST /confirm-upload.
 * The PUT is written with the R2 binding at the returned fileKey: inside vitest the Worker is
 * called through its fetch handler, and wrangler's local S3 endpoint (/cdn-cgi/local/r2/s3/...)
 * is served by wrangler dev's proxy, which the test runtime does not have. The presigned URL
 * itself is checked in test/files/presign.test.ts and by hand against `npm run dev` (README).
 */
export async function upload(
  key: string,
  filename: string,
  bytes: Uint8Array,
  extra: { agentId?: string; inputTokens?: number; outputTokens?: number; prefix?: string } = {},
): Promise<Response> {
  const { prefix = "", ...rest } = extra;
  const ticketRes = await call("POST", `${prefix}/upload-url`, { key, body: { filename, ...(rest.agentId && { agentId: rest.agentId }) } });
  expect(ticketRes.status, await ticketRes.clone().text()).toBe(200);
  const ticket = await json<{ fileKey: string }>(ticketRes);
  await env.FILES.put(ticket.fileKey, bytes);
  return call("POST", `${prefix}/confirm-upload`, { key, body: { filename, ...rest } });
}

export async function listFiles(key: string, query = "", prefix = ""): Promise<FileView[]> {
  const res = await call("GET", `${prefix}/file${query}`, { key });
  expect(res.status).toBe(200);
  return (await json<{ files: FileView[] }>(res)).files;
}

/**
 * Waits for the ingest queue consumer (the real one, run by the test runtime) to finish a file.
 * Bounded: it gives up after `rounds` polls, and the test then fails on the status.
 */
export async function settled(key: string, filename: string, rounds = 100): Promise<FileView> {
  let file: FileView | undefined;
  for (let i = 0; i < rounds; i++) {
    file = (await listFiles(key)).find((f) => f.filename === filename);
    if (file && file.status !== "processing") return file;
    await scheduler.wait(100);
  }
  if (!file) throw new Error(`no file ${filename}`);
  return file;
}

export async function createAgent(key: string, name = "Helper", prefix = ""): Promise<string> {
  const res = await call("POST", `${prefix}/agent`, { key, body: { name } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json<{ id: string }>(res)).id;
}
