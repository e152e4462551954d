import { ContentError, textRefusal } from "../file-types";

/** UTF-8 bytes to a string, refusing what is not text. A leading BOM is dropped. */
export function decodeUtf8(bytes: Uint8Array, ext: ".txt" | ".csv"): string {
  const refusal = textRefusal(bytes, true, ext);
  if (refusal) throw new ContentError(refusal);
  return new TextDecoder("utf-8").decode(bytes).replace(/^\uFEFF/, "");
}

const LIST_ITEM = /^\s*(?:[-*•‣◦]|\d{1,3}[.)]|[a-zA-Z][.)])\s+/;
const UNDERLINE = /^\s*([=\-_~*#])\1{2,}\s*$/;

/**
 * Plain text to paragraphs. Paragraphs are separated by blank lines; inside one, hard-wrapped
 * lines are joined with spaces so that sentences stay whole, while list items, lines ending with
 * a colon or a question mark (headings, FAQ questions) keep their own line.
 */
export function textToParagraphs(text: string): string[] {
  const paragraphs: string[] = [];
  const blocks = text.replace(/\r\n?/g, "\n").split(/\n\s*\n/);
  for (const block of blocks) {
    const lines = block
      .split("\n")
      .map((l) => l.replace(/[\t\f\v ]+/g, " ").trim())
      .filter((l) => l && !UNDERLINE.test(l));
    if (!lines.length) continue;
    let out = lines[0]!;
    for (let i = 1; i < lines.length; i++) {
      const prev = lines[i - 1]!;
      const line = lines[i]!;
      const keepBreak = LIST_ITEM.test(line) || /[:?!]$/.test(prev) || prev.length < 40;
      out += keepBreak ? "\n" + line : " " + line;
    }
    paragraphs.push(out);
  }
  return paragraphs;
}
