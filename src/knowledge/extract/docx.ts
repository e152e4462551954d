import { unzipSync } from "fflate";
import { ContentError } from "../file-types";

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

export function decodeXmlEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-zA-Z]+);/g, (m, e: string) => {
    if (e[0] === "#") {
      const code = e[1] === "x" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return ENTITIES[e] ?? m;
  });
}

function readDocumentXml(bytes: Uint8Array): string {
  let entries: Record<string, Uint8Array>;
  try {
    entries = unzipSync(bytes, { filter: (f) => f.name === "word/document.xml" });
  } catch {
    throw new ContentError("The file is not a valid .docx document (the ZIP package is damaged).");
  }
  const xml = entries["word/document.xml"];
  if (!xml) {
    throw new ContentError("The file is not a Word .docx document (the ZIP package has no word/document.xml).");
  }
  return new TextDecoder("utf-8").decode(xml);
}

/**
 * The body text of a .docx (Office Open XML): one paragraph per w:p, table rows as one line with
 * " | " between cells. Deleted text (w:delText), field codes (w:instrText) and the fallback copies
 * of text boxes (mc:Fallback) are left out.
 */
export function docxToParagraphs(bytes: Uint8Array): string[] {
  const xml = readDocumentXml(bytes);
  const paragraphs: string[] = [];
  let para = "";
  let inText = false;
  let skipDepth = 0; // inside mc:Fallback
  // Open tables nest: a row holds cell texts, a cell holds its paragraphs (and nested rows).
  const rows: string[][] = [];
  const cells: string[][] = [];

  const token = /<(\/?)([A-Za-z][\w.-]*:?[\w.-]*)([^>]*?)(\/?)>|([^<]+)/g;
  for (let m = token.exec(xml); m; m = token.exec(xml)) {
    const [, close, name, , selfClose, text] = m;
    if (text !== undefined) {
      if (inText && !skipDepth) para += decodeXmlEntities(text);
      continue;
    }
    if (name === "mc:Fallback") {
      if (selfClose) continue;
      skipDepth += close ? -1 : 1;
      continue;
    }
    if (skipDepth) continue;
    switch (name) {
      case "w:t":
        inText = !close && !selfClose;
        break;
      case "w:tab":
        if (!close) para += "\t";
        break;
      case "w:br":
      case "w:cr":
        if (!close) para += "\n";
        break;
      case "w:p":
        if (close || selfClose) {
          const p = para.replace(/[ \t\u00a0]+/g, " ").trim();
          para = "";
          if (p) (cells.at(-1) ?? paragraphs).push(p);
        }
        break;
      case "w:tr":
        if (selfClose) break;
        if (!close) rows.push([]);
        else {
          const line = (rows.pop() ?? []).filter(Boolean).join(" | ");
          if (line) (cells.at(-1) ?? paragraphs).push(line);
        }
        break;
      case "w:tc":
        if (selfClose) break;
        if (!close) cells.push([]);
        else rows.at(-1)?.push((cells.pop() ?? []).join(" "));
        break;
    }
  }
  return paragraphs;
}
