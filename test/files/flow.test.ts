import { env } from "cloudflare:workers";
import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { MAX_FILE_BYTES } from "../../src/files/service";
import { searchKnowledge } from "../../src/knowledge/search";
import { call, createWorld, json } from "../helpers/world";
import { createAgent, fixture, listFiles, settled, text, upload, type FileView } from "../knowledge/helpers";

const ACCEPTED = [".txt", ".doc", ".docx", ".pdf", ".csv"];

async function errorOf(res: Response) {
  return json<{ error: string; message: string; acceptedTypes?: string[] }>(res);
}

describe("POST /upload-url", { timeout: 30_000 }, () => {
  it("returns a presigned PUT URL for the local S3 endpoint, the key and the expiry", async () => {
    const w = await createWorld();
    const before = Date.now();
    const res = await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename: "Handbook 2026.pdf" } });
    expect(res.status).toBe(200);
    const ticket = await json(res);
    expect(ticket.fileKey).toBe(`uploads/${w.teamA.id}/Handbook 2026.pdf`);
    const url = new URL(ticket.uploadUrl);
    expect(url.origin + url.pathname).toBe(
      `http://api.test/cdn-cgi/local/r2/s3/agent-platform-files/uploads/${w.teamA.id}/Handbook%202026.pdf`,
    );
    expect(url.searchParams.get("X-Amz-Signature")).toMatch(/^[0-9a-f]{64}$/);
    const ttl = Date.parse(ticket.expiresAt) - before;
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    expect(ticket.maxBytes).toBe(MAX_FILE_BYTES);
  });

  it("refuses every type but .txt .doc .docx .pdf .csv, listing the accepted ones", async () => {
    const w = await createWorld();
    for (const filename of ["clip.mp4", "clip.mov", "deck.ppt", "deck.pptx", "sheet.xls", "sheet.xlsx", "photo.jpg", "logo.png", "README", "notes.", ".txt", "x.txt.exe"]) {
      const res = await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename } });
      expect(res.status, filename).toBe(400);
      const body = await errorOf(res);
      expect(body.acceptedTypes).toEqual(ACCEPTED);
      expect(body.message).toContain(".txt, .doc, .docx, .pdf, .csv");
    }
    for (const filename of ["a.txt", "B.DOC", "c.Docx", "d.pdf", "e.csv", "file.name.with.dots.pdf"]) {
      expect((await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename } })).status, filename).toBe(200);
    }
  });

  it("refuses names that are paths and agents of other teams", async () => {
    const w = await createWorld();
    for (const filename of ["a/b.txt", "..\\b.txt", "tab\there.txt", "", "   "]) {
      expect((await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename } })).status, filename).toBe(400);
    }
    const agentB = await createAgent(w.teamB.sk);
    const res = await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename: "a.txt", agentId: agentB } });
    expect(res.status).toBe(404);
    expect((await errorOf(res)).message).toContain("Agent");
  });
});

describe("POST /confirm-upload", { timeout: 30_000 }, () => {
  it("answers 404 when nothing was uploaded", async () => {
    const w = await createWorld();
    const res = await call("POST", "/confirm-upload", { key: w.teamA.sk, body: { filename: "never.txt", inputTokens: 0, outputTokens: 0 } });
    expect(res.status).toBe(404);
  });

  it("records the file once: a repeated confirm returns the same file", async () => {
    const w = await createWorld();
    const agentId = await createAgent(w.teamA.sk);
    const first = await upload(w.teamA.sk, "faq.txt", fixture("shipping-faq.txt"), { agentId, inputTokens: 10, outputTokens: 20 });
    expect(first.status).toBe(201);
    const file = await json<FileView>(first);
    expect(file).toMatchObject({ filename: "faq.txt", agentId, inputTokens: 10, outputTokens: 20, status: "processing" });
    expect(file.id).toMatch(/^file_/);
    expect(Date.parse(file.createdAt)).not.toBeNaN();

    const again = await call("POST", "/confirm-upload", { key: w.teamA.sk, body: { filename: "faq.txt", agentId, inputTokens: 10, outputTokens: 20 } });
    expect(again.status).toBe(200);
    expect((await json<FileView>(again)).id).toBe(file.id);
    expect(await listFiles(w.teamA.sk)).toHaveLength(1);
    // The upload key is emptied, the bytes live under the file's own key.
    expect(await env.FILES.get(`uploads/${w.teamA.id}/faq.txt`)).toBeNull();
    const stored = await env.FILES.get(`files/${w.teamA.id}/${file.id}/faq.txt`);
    expect(new Uint8Array(await stored!.arrayBuffer())).toEqual(fixture("shipping-faq.txt"));
  });

  it("replaces the content when the same filename is uploaded again", async () => {
    const w = await createWorld();
    await upload(w.teamA.sk, "notes.txt", text("The staff canteen opens at seven in the morning."));
    expect((await settled(w.teamA.sk, "notes.txt")).status).toBe("ready");
    const again = await upload(w.teamA.sk, "notes.txt", text("The rooftop garden closes at sunset every evening."));
    expect(again.status).toBe(200);
    expect((await json<FileView>(again)).status).toBe("processing");
    const done = await settled(w.teamA.sk, "notes.txt");
    expect(done.status).toBe("ready");
    const agentId = await createAgent(w.teamA.sk);
    const search = (query: string) => searchKnowledge(env, { teamId: w.teamA.id, agentId, query });
    expect((await search("rooftop garden")).map((p) => p.text)).toEqual(["The rooftop garden closes at sunset every evening."]);
    expect(await search("canteen")).toEqual([]);
    expect(await listFiles(w.teamA.sk)).toHaveLength(1);
  });

  it("checks the type again at confirm time", async () => {
    const w = await createWorld();
    await env.FILES.put(`uploads/${w.teamA.id}/movie.mp4`, text("not a movie"));
    const res = await call("POST", "/confirm-upload", { key: w.teamA.sk, body: { filename: "movie.mp4", inputTokens: 0, outputTokens: 0 } });
    expect(res.status).toBe(400);
    expect((await errorOf(res)).acceptedTypes).toEqual(ACCEPTED);
  });

  it("refuses content that is not what the extension says, with the reason, and drops the upload", async () => {
    const w = await createWorld();
    const xlsxLike = zipSync({ "[Content_Types].xml": text("<Types/>"), "xl/workbook.xml": text("<workbook/>") });
    const otherZip = zipSync({ "readme.md": text("# hi") });
    const cases: Array<[string, Uint8Array, RegExp]> = [
      ["report.pdf", text("just some text, no PDF here"), /not a PDF/],
      ["letter.docx", text("plain text named docx"), /not a Word \.docx/],
      ["sheet.docx", xlsxLike, /Excel workbook/],
      ["bundle.docx", otherZip, /no word\/document\.xml/],
      ["old.doc", fixture("employee-handbook.docx"), /rename it to \.docx/],
      ["old2.doc", fixture("coffee-machine-manual.pdf"), /not a Word 97-2003/],
      ["binary.txt", new Uint8Array([0x48, 0x69, 0x00, 0x01, 0x02]), /binary data/],
      ["latin1.csv", new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x0a, 0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72]), /UTF-8/],
      ["empty.txt", new Uint8Array(0), /empty/],
    ];
    for (const [filename, bytes, reason] of cases) {
      const res = await upload(w.teamA.sk, filename, bytes);
      expect(res.status, filename).toBe(400);
      expect((await errorOf(res)).message, filename).toMatch(reason);
      expect(await env.FILES.head(`uploads/${w.teamA.id}/${filename}`), filename).toBeNull();
    }
    expect(await listFiles(w.teamA.sk)).toEqual([]);
  });

  it("refuses files over the size limit with a clear error and deletes the object", async () => {
    const w = await createWorld();
    const big = new Uint8Array(MAX_FILE_BYTES + 1).fill(0x61);
    const res = await upload(w.teamA.sk, "huge.txt", big);
    expect(res.status).toBe(413);
    expect((await errorOf(res)).message).toMatch(/25\.0 MB/);
    expect(await env.FILES.head(`uploads/${w.teamA.id}/huge.txt`)).toBeNull();
    expect(await listFiles(w.teamA.sk)).toEqual([]);
  });

  it("keeps the file in use when a replacement upload is refused", async () => {
    const w = await createWorld();
    await upload(w.teamA.sk, "manual.pdf", fixture("coffee-machine-manual.pdf"));
    expect((await settled(w.teamA.sk, "manual.pdf")).status).toBe("ready");
    expect((await upload(w.teamA.sk, "manual.pdf", text("oops"))).status).toBe(400);
    const [file] = await listFiles(w.teamA.sk);
    expect(file).toMatchObject({ status: "ready", size: fixture("coffee-machine-manual.pdf").length });
  });
});

describe("ingestion status", { timeout: 30_000 }, () => {
  it("ends as failed with the reason for a PDF without selectable text, and can be retried", async () => {
    const w = await createWorld();
    expect((await upload(w.teamA.sk, "scan.pdf", fixture("scanned-notice.pdf"))).status).toBe(201);
    const failed = await settled(w.teamA.sk, "scan.pdf");
    expect(failed.status).toBe("failed");
    expect(failed.reason).toBe("The PDF has no selectable text (scanned?). Run it through OCR or upload the text as .docx or .txt.");

    const retry = await call("POST", "/file/reindex?filename=scan.pdf", { key: w.teamA.sk });
    expect(retry.status).toBe(202);
    expect(await json<FileView>(retry)).toMatchObject({ status: "processing", reason: null });
    expect((await settled(w.teamA.sk, "scan.pdf")).status).toBe("failed");
  });

  it("emits file.ready and file.failed events", async () => {
    const w = await createWorld();
    await upload(w.teamA.sk, "ok.csv", fixture("pricing-plans.csv"));
    await upload(w.teamA.sk, "scan.pdf", fixture("scanned-notice.pdf"));
    const ok = await settled(w.teamA.sk, "ok.csv");
    const bad = await settled(w.teamA.sk, "scan.pdf");
    const { results } = await env.DB.prepare("SELECT type, data FROM events WHERE team_id = ? AND type LIKE 'file.%' ORDER BY type")
      .bind(w.teamA.id)
      .all<{ type: string; data: string }>();
    expect(results.map((r) => [r.type, JSON.parse(r.data)])).toEqual([
      ["file.failed", { fileId: bad.id, filename: "scan.pdf", agentId: null, size: bad.size, reason: bad.reason }],
      ["file.ready", { fileId: ok.id, filename: "ok.csv", agentId: null, size: ok.size, chunkCount: ok.chunkCount }],
    ]);
  });
});

describe("file records", { timeout: 30_000 }, () => {
  it("lists with the agent filter, updates with PUT, and 404s unknown names", async () => {
    const w = await createWorld();
    const a1 = await createAgent(w.teamA.sk, "One");
    const a2 = await createAgent(w.teamA.sk, "Two");
    await upload(w.teamA.sk, "one.txt", text("First agent's file."), { agentId: a1 });
    await upload(w.teamA.sk, "all.txt", text("A file for everyone."));
    expect((await listFiles(w.teamA.sk, `?agentId=${a1}`)).map((f) => f.filename)).toEqual(["one.txt"]);
    expect((await listFiles(w.teamA.sk, `?agentId=${a2}`)).map((f) => f.filename)).toEqual([]);
    expect((await listFiles(w.teamA.sk)).map((f) => f.filename)).toEqual(["one.txt", "all.txt"]);

    const put = await call("PUT", "/file?filename=all.txt", { key: w.teamA.sk, body: { agentId: a2, inputTokens: 5, outputTokens: 6 } });
    expect(put.status).toBe(200);
    const updated = await json<FileView>(put);
    expect(updated).toMatchObject({ filename: "all.txt", agentId: a2, inputTokens: 5, outputTokens: 6 });
    expect(Date.parse(updated.updatedAt)).not.toBeNaN();
    expect((await listFiles(w.teamA.sk, `?agentId=${a2}`)).map((f) => f.filename)).toEqual(["all.txt"]);

    const clear = await call("PUT", "/file?filename=all.txt", { key: w.teamA.sk, body: { agentId: null } });
    expect(await json<FileView>(clear)).toMatchObject({ agentId: null, inputTokens: 5 });

    expect((await call("PUT", "/file?filename=nope.txt", { key: w.teamA.sk, body: { inputTokens: 1 } })).status).toBe(404);
    expect((await call("PUT", "/file?filename=all.txt", { key: w.teamA.sk, body: { agentId: "agt_missing" } })).status).toBe(404);
    expect((await call("PUT", "/file", { key: w.teamA.sk, body: { inputTokens: 1 } })).status).toBe(400);
    expect((await call("PUT", "/file?filename=all.txt", { key: w.teamA.sk, body: { inputTokens: -1 } })).status).toBe(400);
  });

  it("gives a presigned GET URL by filename or name, optionally checked against the agent", async () => {
    const w = await createWorld();
    const a1 = await createAgent(w.teamA.sk);
    const up = await json<FileView>(await upload(w.teamA.sk, "policy.doc", fixture("security-policy.doc"), { agentId: a1 }));
    for (const q of ["filename=policy.doc", "name=policy.doc", `filename=policy.doc&agentId=${a1}`]) {
      const res = await call("GET", `/file/presigned-url?${q}`, { key: w.teamA.sk });
      expect(res.status, q).toBe(200);
      const { url, expiresAt } = await json(res);
      const u = new URL(url);
      expect(u.pathname).toBe(`/cdn-cgi/local/r2/s3/agent-platform-files/files/${w.teamA.id}/${up.id}/policy.doc`);
      expect(u.searchParams.get("X-Amz-Expires")).toBe("900");
      expect(Date.parse(expiresAt)).toBeGreaterThan(Date.now());
    }
    expect((await call("GET", "/file/presigned-url?filename=policy.doc&agentId=agt_other", { key: w.teamA.sk })).status).toBe(404);
    expect((await call("GET", "/file/presigned-url?filename=missing.doc", { key: w.teamA.sk })).status).toBe(404);
    expect((await call("GET", "/file/presigned-url", { key: w.teamA.sk })).status).toBe(400);
  });

  it("deletes by filename or id: object, record and indexed text", async () => {
    const w = await createWorld();
    const agentId = await createAgent(w.teamA.sk);
    const a = await json<FileView>(await upload(w.teamA.sk, "faq.txt", fixture("shipping-faq.txt")));
    const b = await json<FileView>(await upload(w.teamA.sk, "plans.csv", fixture("pricing-plans.csv")));
    await settled(w.teamA.sk, "faq.txt");
    await settled(w.teamA.sk, "plans.csv");
    expect((await searchKnowledge(env, { teamId: w.teamA.id, agentId, query: "refund" })).length).toBeGreaterThan(0);

    expect((await call("DELETE", "/file?filename=faq.txt", { key: w.teamA.sk })).status).toBe(204);
    expect((await call("DELETE", `/file?id=${b.id}`, { key: w.teamA.sk })).status).toBe(204);
    expect(await listFiles(w.teamA.sk)).toEqual([]);
    expect(await env.FILES.head(`files/${w.teamA.id}/${a.id}/faq.txt`)).toBeNull();
    expect(await searchKnowledge(env, { teamId: w.teamA.id, agentId, query: "refund" })).toEqual([]);
    const chunks = await env.DB.prepare("SELECT count(*) AS n FROM knowledge_chunks WHERE file_id IN (?, ?)").bind(a.id, b.id).first<{ n: number }>();
    expect(chunks?.n).toBe(0);
    const fts = await env.DB.prepare(`SELECT count(*) AS n FROM knowledge_fts WHERE knowledge_fts MATCH 'text : "refunds"' AND rowid NOT IN (SELECT id FROM knowledge_chunks)`).first<{ n: number }>();
    expect(fts?.n).toBe(0);

    expect((await call("DELETE", "/file?filename=faq.txt", { key: w.teamA.sk })).status).toBe(404);
    expect((await call("DELETE", "/file", { key: w.teamA.sk })).status).toBe(400);
  });
});

describe("team isolation", { timeout: 30_000 }, () => {
  it("hides one team's files from another and serves user keys under /team/{teamId}", async () => {
    const w = await createWorld();
    const up = await json<FileView>(await upload(w.teamA.sk, "secret.txt", text("Team A only.")));
    const b = w.teamB.sk;
    expect(await listFiles(b)).toEqual([]);
    expect((await call("GET", "/file/presigned-url?filename=secret.txt", { key: b })).status).toBe(404);
    expect((await call("PUT", "/file?filename=secret.txt", { key: b, body: { inputTokens: 1 } })).status).toBe(404);
    expect((await call("DELETE", `/file?id=${up.id}`, { key: b })).status).toBe(404);
    expect((await call("POST", "/file/reindex?filename=secret.txt", { key: b })).status).toBe(404);
    // Team B uploading the same name gets its own file.
    expect((await upload(b, "secret.txt", text("Team B's own."))).status).toBe(201);

    const owner = w.owner.userKey;
    const prefix = `/team/${w.teamA.id}`;
    expect((await listFiles(owner, "", prefix)).map((f) => f.id)).toEqual([up.id]);
    expect((await upload(owner, "by-user.txt", text("Uploaded with a user key."), { prefix })).status).toBe(201);
    expect((await listFiles(w.teamA.sk)).map((f) => f.filename)).toEqual(["secret.txt", "by-user.txt"]);
    expect((await call("GET", "/file", { key: w.teamA.pk })).status).toBe(403);
  });
});
