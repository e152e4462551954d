import { describe, expect, it } from "vitest";
import { chunkParagraphs, DEFAULT_CHUNKING, splitSentences } from "../../src/knowledge/chunk";

const sentence = (i: number) => `Sentence number ${i} talks about topic ${i} in some detail.`;

describe("chunking", () => {
  it("splits sentences, not abbreviations, decimals or initials", () => {
    expect(splitSentences("Dr. Smith met J. Doe at 5 p.m. today. The tank holds 1.8 litres! Is it e.g. enough? Yes.")).toEqual([
      "Dr. Smith met J. Doe at 5 p.m. today.",
      "The tank holds 1.8 litres!",
      "Is it e.g. enough?",
      "Yes.",
    ]);
  });

  it("keeps every sentence, never exceeds max, and starts and ends on sentence boundaries", () => {
    const paragraphs = Array.from({ length: 12 }, (_, p) => Array.from({ length: 7 }, (_, s) => sentence(p * 10 + s)).join(" "));
    const chunks = chunkParagraphs(paragraphs);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(DEFAULT_CHUNKING.max);
      expect(c).toMatch(/^Sentence number \d+/);
      expect(c).toMatch(/detail\.$/);
    }
    for (let p = 0; p < 12; p++) {
      for (let s = 0; s < 7; s++) expect(chunks.some((c) => c.includes(sentence(p * 10 + s)))).toBe(true);
    }
  });

  it("overlaps chunks cut inside a paragraph by the last sentence(s)", () => {
    const long = Array.from({ length: 40 }, (_, i) => sentence(i)).join(" ");
    const chunks = chunkParagraphs([long], { target: 300, max: 450, overlap: 120 });
    expect(chunks.length).toBeGreaterThan(3);
    for (let i = 1; i < chunks.length; i++) {
      const prev = chunks[i - 1]!;
      const firstSentence = splitSentences(chunks[i]!)[0]!;
      expect(prev).toContain(firstSentence);
      expect(prev.startsWith(firstSentence)).toBe(false);
    }
  });

  it("prefers paragraph boundaries and keeps a heading with the text below it", () => {
    const body = (n: number) => Array.from({ length: 5 }, (_, i) => sentence(n * 10 + i)).join(" ");
    const chunks = chunkParagraphs(["Heading one", body(1), "Heading two", body(2), "Heading three", body(3)], {
      target: 400,
      max: 600,
      overlap: 100,
    });
    for (const h of ["Heading two", "Heading three"]) {
      const c = chunks.find((x) => x.includes(h))!;
      expect(c.startsWith(h), c).toBe(true);
    }
    expect(chunks.every((c) => !/Heading \w+$/.test(c))).toBe(true);
  });

  it("cuts a run-on text without sentence ends between words", () => {
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`).join(" ");
    const chunks = chunkParagraphs([words], { target: 300, max: 400, overlap: 50 });
    expect(chunks.every((c) => c.length <= 400)).toBe(true);
    expect(chunks.join(" ").split(" ").filter((w, i, all) => all.indexOf(w) === i)).toHaveLength(600);
  });

  it("keeps the line structure of CSV rows", () => {
    const chunks = chunkParagraphs(["plan: Team\nprice: 29", "plan: Business\nprice: 79"]);
    expect(chunks).toEqual(["plan: Team\nprice: 29\n\nplan: Business\nprice: 79"]);
  });
});
