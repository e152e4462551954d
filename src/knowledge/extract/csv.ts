import { ContentError } from "../file-types";

/** The delimiter with most occurrences (outside quotes) in the first line: ",", ";" or tab. */
function detectDelimiter(text: string): string {
  const counts = new Map<string, number>([
    [",", 0],
    [";", 0],
    ["\t", 0],
  ]);
  let quoted = false;
  for (const ch of text) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === "\n" || ch === "\r")) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ",";
  for (const [d, n] of counts) if (n > counts.get(best)!) best = d;
  return best;
}

/** RFC 4180 parsing: quoted fields may hold delimiters, doubled quotes and line breaks. */
export function parseCsv(text: string, delimiter = detectDelimiter(text)): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const endField = () => {
    row.push(field);
    field = "";
  };
  const endRow = () => {
    endField();
    if (row.some((f) => f.trim() !== "")) rows.push(row);
    row = [];
  };
  while (i < text.length) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        field += ch;
      }
      i++;
      continue;
    }
    if (ch === '"' && field.trim() === "") {
      quoted = true;
      field = "";
    } else if (ch === delimiter) {
      endField();
    } else if (ch === "\n" || ch === "\r") {
      endRow();
      if (ch === "\r" && text[i + 1] === "\n") i++;
    } else {
      field += ch;
    }
    i++;
  }
  if (quoted) throw new ContentError("The CSV file is malformed: a quoted field is never closed.");
  if (field !== "" || row.length) endRow();
  return rows;
}

/**
 * One paragraph per data row, as "column: value" lines, so that a row can be found by its
 * column names as well as its values and quoted on its own.
 */
export function csvToParagraphs(text: string): string[] {
  const rows = parseCsv(text);
  const header = rows[0];
  if (!header) throw new ContentError("The CSV file has no rows.");
  // snake_case headers read better as words: "monthly price eur: 29".
  const names = header.map((h, i) => h.replace(/[_\s]+/g, " ").trim() || `column ${i + 1}`);
  if (rows.length === 1) return [names.join(", ")];
  const paragraphs: string[] = [];
  for (const row of rows.slice(1)) {
    const lines: string[] = [];
    row.forEach((value, i) => {
      const v = value.replace(/\s+/g, " ").trim();
      if (v) lines.push(`${names[i] ?? `column ${i + 1}`}: ${v}`);
    });
    if (lines.length) paragraphs.push(lines.join("\n"));
  }
  return paragraphs;
}
