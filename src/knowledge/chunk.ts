/**
 * Chunking: paragraphs -> sentences -> passages of about `target` characters (never more than
 * `max`), cut at paragraph boundaries where possible and otherwise between sentences. A passage
 * cut inside a paragraph starts with the last sentence(s) of the one before (up to `overlap`
 * characters), so a fact that spans the cut is whole in one of them. Every passage starts and ends
 * on a sentence boundary, so it can be quoted as it is.
 */
export type ChunkOptions = { target: number; max: number; overlap: number };

export const DEFAULT_CHUNKING: ChunkOptions = { target: 600, max: 900, overlap: 200 };

type Unit = { text: string; sep: string; paraStart: boolean; paraEnd: boolean };

// Words after which a period does not end a sentence.
const ABBREVIATIONS = new Set([
  "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "st", "no", "nr", "fig", "approx", "ca", "incl",
  "excl", "dept", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
  "oct", "nov", "dec", "z.b", "bzw", "usw", "vgl", "ggf", "u.a", "d.h",
]);

const SENTENCE_END = /[.!?…]["'”’)\]]*\s+(?=["'“‘(\[]?[\p{Lu}\p{N}])/gu;

/** Sentences of one line of text. */
export function splitSentences(line: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const m of line.matchAll(SENTENCE_END)) {
    const end = m.index + m[0].length;
    const before = line.slice(start, m.index + 1);
    const lastWord = /([\p{L}.]+)\.$/u.exec(before)?.[1]?.toLowerCase() ?? "";
    // "Dr. Smith", "e.g. This", single initials ("J. Smith"): not a sentence end.
    if (ABBREVIATIONS.has(lastWord) || /^\p{L}$/u.test(lastWord)) continue;
    out.push(line.slice(start, end).trim());
    start = end;
  }
  const rest = line.slice(start).trim();
  if (rest) out.push(rest);
  return out;
}

/** A unit longer than `max` (a run-on sentence, a table row) is cut between words. */
function splitLong(text: string, max: number): string[] {
  if (text.length <= max) return [text];
  const parts: string[] = [];
  let current = "";
  for (const word of text.split(/\s+/)) {
    if (current && current.length + 1 + word.length > max) {
      parts.push(current);
      current = "";
    }
    // A single "word" longer than max (a URL, a hash): hard cut.
    for (let w = word; w; w = w.slice(max)) {
      const piece = w.slice(0, max);
      if (current && current.length + 1 + piece.length > max) {
        parts.push(current);
        current = "";
      }
      current = current ? current + " " + piece : piece;
    }
  }
  if (current) parts.push(current);
  return parts;
}

function toUnits(paragraphs: string[], max: number): Unit[] {
  const units: Unit[] = [];
  for (const paragraph of paragraphs) {
    const lines = paragraph.split("\n").map((l) => l.trim()).filter(Boolean);
    const paraUnits: Unit[] = [];
    lines.forEach((line, li) => {
      splitSentences(line).forEach((sentence, si) => {
        splitLong(sentence, max).forEach((text, pi) => {
          const sep = li === 0 && si === 0 && pi === 0 ? "\n\n" : si === 0 && pi === 0 ? "\n" : " ";
          paraUnits.push({ text, sep, paraStart: paraUnits.length === 0, paraEnd: false });
        });
      });
    });
    if (paraUnits.length) paraUnits[paraUnits.length - 1]!.paraEnd = true;
    units.push(...paraUnits);
  }
  return units;
}

/** A short paragraph without a sentence end: a heading, which belongs with what follows it. */
function isHeading(unit: Unit): boolean {
  return unit.paraStart && unit.paraEnd && unit.text.length < 100 && !/[.!?:;]$/.test(unit.text);
}

function join(units: Unit[]): string {
  return units.map((u, i) => (i === 0 ? u.text : u.sep + u.text)).join("");
}

export function chunkParagraphs(paragraphs: string[], options: ChunkOptions = DEFAULT_CHUNKING): string[] {
  const { target, max, overlap } = options;
  const units = toUnits(paragraphs, max);
  const chunks: string[] = [];
  let current: Unit[] = [];
  let length = 0;
  let fresh = 0; // units of `current` that are not overlap from the previous chunk

  const emit = (next: Unit | undefined) => {
    // Keep trailing headings for the next chunk, unless they are all this chunk has.
    const carried: Unit[] = [];
    while (current.length - carried.length > 1 && isHeading(current[current.length - 1 - carried.length]!)) {
      carried.unshift(current[current.length - 1 - carried.length]!);
    }
    const body = current.slice(0, current.length - carried.length);
    chunks.push(join(body));
    // Overlap only when the cut falls inside a paragraph.
    let tail: Unit[] = [];
    if (!carried.length && next && !next.paraStart) {
      let size = 0;
      for (let i = body.length - 1; i >= 0; i--) {
        const u = body[i]!;
        if (size + u.text.length > overlap || i === 0) break;
        tail = [u, ...tail];
        size += u.text.length + 1;
        if (u.paraStart) break;
      }
    }
    current = [...tail, ...carried];
    length = current.reduce((n, u) => n + u.text.length + 1, 0);
    fresh = carried.length;
  };

  // Length of the block that starts at each paragraph start: the paragraph, and for a heading
  // also the paragraph after it.
  const blockLength = new Map<number, number>();
  for (let i = units.length - 1, para = 0, next = 0; i >= 0; i--) {
    const u = units[i]!;
    para += u.text.length + u.sep.length;
    if (u.paraStart) {
      blockLength.set(i, para + (isHeading(u) ? next : 0));
      next = para;
      para = 0;
    }
  }

  for (const [i, unit] of units.entries()) {
    const added = unit.text.length + unit.sep.length;
    if (fresh > 0) {
      const wouldExceed = length + added > max;
      const full = length >= target;
      // Cut before a paragraph (with its heading) that would not fit in this passage anyway.
      const goodBreak = unit.paraStart && length >= target * 0.5 && length + (blockLength.get(i) ?? added) > target;
      if (wouldExceed || full || goodBreak) emit(unit);
    }
    // Overlap must never push a passage over max.
    while (current.length && length + added > max && fresh === 0) {
      const dropped = current.shift()!;
      length -= dropped.text.length + 1;
    }
    current.push(unit);
    length += added;
    fresh++;
  }
  if (fresh > 0) chunks.push(join(current));
  return chunks.filter((c) => c.trim());
}
