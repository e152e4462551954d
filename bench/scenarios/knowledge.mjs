// Knowledge files: ingestion throughput (MB of text per second, from confirm-upload to "ready") for
// a 5 MB text file and a 50-page PDF, then search latency over at least 10,000 indexed chunks.
// Uploads go through the real presigned URL (wrangler's local S3 endpoint for R2). Ingestion
// times include the ingest queue's batching delay (max_batch_timeout = 1 s).

/** Deterministic PRNG (mulberry32), so every run indexes the same text. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = "ka lo mi ra te su no vi be da fe gu ho ja ki le ma ne po qu ri sa tu va we xi yo ze".split(" ");

/** A vocabulary of made-up words with a Zipf-like use, as in natural text. */
function makeVocabulary(random, size = 4000) {
  const words = new Set();
  while (words.size < size) {
    const n = 2 + Math.floor(random() * 3);
    let w = "";
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(w);
  }
  return [...words];
}

function makeParagraphs(random, vocabulary, bytes) {
  const pick = () => vocabulary[Math.floor(vocabulary.length * random() ** 2.5)];
  const paragraphs = [];
  let size = 0;
  while (size < bytes) {
    const sentences = [];
    for (let s = 3 + Math.floor(random() * 5); s > 0; s--) {
      const words = Array.from({ length: 6 + Math.floor(random() * 13) }, pick);
      const sentence = words.join(" ");
      sentences.push(sentence[0].toUpperCase() + sentence.slice(1) + ".");
    }
    const p = sentences.join(" ");
    paragraphs.push(p);
    size += p.length + 2;
  }
  return paragraphs;
}

/** Wraps text at `width` characters. */
function wrap(text, width) {
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** A minimal PDF 1.4 with a real text layer (Helvetica, one content stream per page). */
function makePdf(paragraphs, pageCount) {
  const linesPerPage = 56;
  const pages = [[]];
  for (const p of paragraphs) {
    for (const line of [...wrap(p, 95), ""]) {
      if (pages.at(-1).length >= linesPerPage) {
        if (pages.length === pageCount) break;
        pages.push([]);
      }
      pages.at(-1).push(line);
    }
    if (pages.length === pageCount && pages.at(-1).length >= linesPerPage) break;
  }
  const esc = (s) => s.replace(/[\\()]/g, (m) => `\\${m}`);
  const objects = [];
  objects[1] = "<< /Type /Catalog /Pages 2 0 R >>";
  objects[3] = "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>";
  const kids = [];
  let id = 4;
  for (const lines of pages) {
    const content = `BT /F1 10 Tf 13 TL 50 800 Td\n${lines.map((l) => `(${esc(l)}) '`).join("\n")}\nET`;
    objects[id] = `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;
    objects[id + 1] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${id} 0 R >>`;
    kids.push(`${id + 1} 0 R`);
    id += 2;
  }
  objects[2] = `<< /Type /Pages /Kids [${kids.join(" ")}] /Count ${kids.length} >>`;
  let out = "%PDF-1.4\n";
  const offsets = [];
  for (let i = 1; i < objects.length; i++) {
    offsets[i] = out.length;
    out += `${i} 0 obj\n${objects[i]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let i = 1; i < objects.length; i++) out += `${String(offsets[i]).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return { bytes: Buffer.from(out, "latin1"), pages: pages.length, textBytes: pages.flat().join("\n").length };
}

const mb = (bytes) => bytes / (1024 * 1024);
const fmt = (n, d = 2) => n.toFixed(d);

/** @type {import("../lib/scenario.mjs").Scenario} */
export default {
  name: "knowledge",
  description: "ingestion MB/s (5 MB .txt, 50-page .pdf, confirm -> ready) and GET /file/search over 10,000+ chunks vs GET /team/{teamId}",
  async run({ baseUrl, keys, api, compare, ratio, settings }) {
    const sk = keys.secretKey;
    const random = rng(42);
    const vocabulary = makeVocabulary(random);

    async function ingest(filename, bytes) {
      const ticket = await api("/upload-url", { method: "POST", key: sk, body: { filename } });
      const put = await fetch(ticket.uploadUrl, { method: "PUT", body: bytes });
      if (!put.ok) throw new Error(`PUT ${filename}: HTTP ${put.status}`);
      const t0 = performance.now();
      await api("/confirm-upload", { method: "POST", key: sk, body: { filename, inputTokens: 0, outputTokens: 0 } });
      const confirmMs = performance.now() - t0;
      for (;;) {
        const { files } = await api("/file", { key: sk });
        const file = files.find((f) => f.filename === filename);
        if (file.status === "failed") throw new Error(`${filename} failed: ${file.reason}`);
        if (file.status === "ready") return { seconds: (performance.now() - t0) / 1000, confirmMs, chunks: file.chunkCount };
        if (performance.now() - t0 > 600_000) throw new Error(`${filename} still processing after 10 minutes`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }

    const text = makeParagraphs(random, vocabulary, 5 * 1024 * 1024).join("\n\n");
    const txtBytes = Buffer.from(text, "utf8");
    const txt = await ingest("bench-5mb.txt", txtBytes);
    console.log(
      `   5 MB .txt: ${fmt(mb(txtBytes.length))} MB text, ${txt.chunks} chunks, confirm ${fmt(txt.confirmMs, 0)} ms, ` +
        `ready after ${fmt(txt.seconds)} s = ${fmt(mb(txtBytes.length) / txt.seconds)} MB/s`,
    );

    const pdf = makePdf(makeParagraphs(random, vocabulary, 400_000), 50);
    const pdfRun = await ingest("bench-50-pages.pdf", pdf.bytes);
    console.log(
      `   ${pdf.pages}-page .pdf: ${fmt(mb(pdf.bytes.length))} MB file, ${fmt(mb(pdf.textBytes))} MB text, ${pdfRun.chunks} chunks, ` +
        `ready after ${fmt(pdfRun.seconds)} s = ${fmt(mb(pdf.textBytes) / pdfRun.seconds)} MB/s of text (${fmt(pdf.pages / pdfRun.seconds, 1)} pages/s)`,
    );

    let chunks = txt.chunks + pdfRun.chunks;
    for (let i = 0; chunks < 10_000; i++) {
      const extra = await ingest(`bench-extra-${i}.txt`, Buffer.from(makeParagraphs(random, vocabulary, 1024 * 1024).join("\n\n")));
      chunks += extra.chunks;
    }
    console.log(`   search index: ${chunks} chunks`);

    const agent = await api("/agent", { method: "POST", key: sk, body: { name: "Bench reader", tools: ["AgentKnowledgeTool"] } });
    // Queries of 2-4 words of varied frequency, handed out round-robin by a getter.
    const queries = Array.from({ length: 64 }, () => {
      const n = 2 + Math.floor(random() * 3);
      return Array.from({ length: n }, () => vocabulary[Math.floor(vocabulary.length * random() ** 1.5)]).join(" ");
    });
    const searchTarget = (name, extra) => {
      let next = 0;
      const target = { name, init: { headers: { "x-api-key": sk } } };
      Object.defineProperty(target, "url", {
        enumerable: true,
        get: () => `${baseUrl}/file/search?query=${encodeURIComponent(queries[next++ % queries.length])}${extra}`,
      });
      return target;
    };
    const team = { name: "GET /team/{teamId} (usk)", url: `${baseUrl}/team/${keys.teamId}`, init: { headers: { "x-api-key": keys.userKey } } };
    const agentSearch = searchTarget(`GET /file/search (agent scope, ${chunks} chunks)`, `&agentId=${agent.id}&limit=5`);
    const teamSearch = searchTarget(`GET /file/search (team scope, ${chunks} chunks)`, "&limit=5");
    const [t, a, s] = await compare([team, agentSearch, teamSearch], settings);
    return {
      results: [t, a, s],
      ratios: [
        { label: "ingestion 5 MB .txt (MB/s)", value: mb(txtBytes.length) / txt.seconds },
        { label: "ingestion 50-page .pdf (MB/s of text)", value: mb(pdf.textBytes) / pdfRun.seconds },
        ratio("search (agent scope) / authenticated team read (req/s)", a, t),
      ],
    };
  },
};
