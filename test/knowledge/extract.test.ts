import { zipSync } from "fflate";
import { describe, expect, it } from "vitest";
import { extractParagraphs } from "../../src/knowledge/extract";
import { parseCsv } from "../../src/knowledge/extract/csv";
import { CompoundFile } from "../../src/knowledge/extract/cfb";
import { wordTextToParagraphs } from "../../src/knowledge/extract/doc";
import { NO_TEXT_REASON } from "../../src/knowledge/extract/pdf";
import { textToParagraphs } from "../../src/knowledge/extract/text";
import { ContentError, sniffRefusal } from "../../src/knowledge/file-types";
import { fixture, text } from "./helpers";

async function reason(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ContentError);
    return (err as Error).message;
  }
  throw new Error("expected a ContentError");
}

// Fixtures are real files: LibreOffice wrote the .doc, .docx and .pdf (make-fixtures.sh).
describe("extraction from real files", { timeout: 30_000 }, () => {
  it(".docx (LibreOffice): paragraphs, headings, table rows as cells joined by |", async () => {
    const p = await extractParagraphs(".docx", fixture("employee-handbook.docx"));
    expect(p[0]).toBe("Northwind Studio Employee Handbook");
    expect(p).toContain(
      "Parents are entitled to 16 weeks of fully paid parental leave, which can be taken within the first two years after the birth or adoption of a child. The leave may be split into at most three blocks.",
    );
    expect(p).toContain("Lisbon | Rua Augusta 155, 1100-048 Lisboa | 9:00 to 17:00");
    expect(p.at(-4)).toBe("Offices");
  });

  it(".doc (Word 97 binary, LibreOffice): piece table text, field codes dropped, Unicode kept", async () => {
    const p = await extractParagraphs(".doc", fixture("security-policy.doc"));
    expect(p[0]).toBe("Information Security Policy");
    expect(p).toHaveLength(16);
    // The link is a HYPERLINK field: its result text stays, its code goes.
    expect(p[1]).toContain("whose handbook is at the security intranet page.");
    expect(p.join(" ")).not.toMatch(/HYPERLINK|intranet\.example/);
    expect(p.at(-1)).toBe(
      "Visitors must sign in at reception, wear a visitor badge and be accompanied at all times in office areas. The café on the ground floor — “Café Ωmega” — is open to visitors without an escort.",
    );
    const cfb = new CompoundFile(fixture("security-policy.doc"));
    expect(cfb.entries.map((e) => e.name)).toEqual(expect.arrayContaining(["WordDocument", "1Table"]));
  });

  it(".pdf (LibreOffice): text layer as paragraphs, lines joined", async () => {
    const p = await extractParagraphs(".pdf", fixture("coffee-machine-manual.pdf"));
    expect(p[0]).toBe("Aurora X2 Espresso Machine: User Manual");
    expect(p).toContain("7. Error codes");
    expect(p).toContain(
      "Descale the machine every 200 cups or when the orange descaling light flashes. Use only the Aurora descaling solution, mixed 1:4 with water. The descaling programme takes about 25 minutes and must not be interrupted.",
    );
    expect(p.at(-1)).toBe("Power: 1450 watts. Pump pressure: 15 bar. Weight: 9.2 kilograms. Dimensions: 24 by 44 by 36 centimetres.");
  });

  it(".pdf without a text layer (a scan) is refused with the reason", async () => {
    expect(await reason(extractParagraphs(".pdf", fixture("scanned-notice.pdf")))).toBe(NO_TEXT_REASON);
    expect(NO_TEXT_REASON).toMatch(/^The PDF has no selectable text \(scanned\?\)/);
  });

  it(".csv: one paragraph per row as 'column: value' lines, quotes and line breaks in fields", async () => {
    const p = await extractParagraphs(".csv", fixture("pricing-plans.csv"));
    expect(p).toHaveLength(5);
    expect(p[1]).toBe(
      'plan: Team\nmonthly price eur: 29\nseats: 10\nstorage gb: 100\nsupport: Email and chat, 24h response\nnotes: Shared workspaces and "guest" access for clients',
    );
    expect(p[3]).toContain("notes: On-premise deployment available. Includes a 99.95% uptime SLA.");
  });

  it(".txt: blank lines separate paragraphs, wrapped lines are joined, questions keep their line", async () => {
    const p = await extractParagraphs(".txt", fixture("shipping-faq.txt"));
    expect(p[0]).toBe("Shipping and Returns: Frequently Asked Questions");
    expect(p[1]).toBe(
      "How long does standard shipping take?\nStandard shipping within Germany takes 2 to 4 business days. Express orders placed before 14:00 arrive the next business day.",
    );
  });
});

describe("refusals of damaged or disguised content", { timeout: 30_000 }, () => {
  it("refuses a truncated PDF and a PDF header with garbage", async () => {
    const pdf = fixture("coffee-machine-manual.pdf");
    expect(await reason(extractParagraphs(".pdf", pdf.slice(0, 900)))).toMatch(/PDF/);
    expect(await reason(extractParagraphs(".pdf", text("%PDF-1.7\nthis is not really a pdf")))).toMatch(/PDF/);
  });

  it("refuses a .docx without word/document.xml and a damaged zip", async () => {
    expect(await reason(extractParagraphs(".docx", zipSync({ "a.txt": text("x") })))).toMatch(/no word\/document\.xml/);
    const docx = fixture("employee-handbook.docx");
    expect(await reason(extractParagraphs(".docx", docx.slice(0, 200)))).toMatch(/damaged|not a Word/);
  });

  it("refuses a .doc that is not Word inside, or is truncated", async () => {
    const doc = fixture("security-policy.doc");
    expect(await reason(extractParagraphs(".doc", doc.slice(0, 1024)))).toMatch(/damaged/);
    expect(await reason(extractParagraphs(".doc", text("{\\rtf1 not a doc}")))).toMatch(/not a Word 97-2003/);
  });

  it("refuses text that is not UTF-8 or holds NUL bytes, and files without text", async () => {
    expect(await reason(extractParagraphs(".txt", new Uint8Array([0xff, 0xfe, 0x41, 0x00])))).toMatch(/binary data/);
    expect(await reason(extractParagraphs(".txt", new Uint8Array([0x63, 0x61, 0x66, 0xe9])))).toMatch(/UTF-8/);
    expect(await reason(extractParagraphs(".txt", text(" \n\n \t ")))).toBe("The file contains no text.");
    expect(await reason(extractParagraphs(".csv", text('a,b\n"open quote,1')))).toMatch(/never closed/);
  });

  it("sniffs a prefix without refusing a multi-byte character cut at its end", () => {
    const bytes = text("Grüße aus Köln");
    const cut = bytes.slice(0, 3); // "Gr" + the first byte of "ü"
    expect(sniffRefusal(".txt", cut, false)).toBeNull();
    expect(sniffRefusal(".txt", cut, true)).toMatch(/UTF-8/);
  });
});

describe("format details", () => {
  it("parses RFC 4180 CSV: quotes, doubled quotes, CRLF, semicolons", () => {
    expect(parseCsv('a,"b,c","say ""hi"""\r\n1,"two\nlines",3\r\n')).toEqual([
      ["a", "b,c", 'say "hi"'],
      ["1", "two\nlines", "3"],
    ]);
    expect(parseCsv("name;price\nTea;2,50\n")).toEqual([
      ["name", "price"],
      ["Tea", "2,50"],
    ]);
  });

  it("handles Word's special characters: nested fields, cells, line and page breaks", () => {
    const raw =
      "Title\r" +
      "See \x13 HYPERLINK \"x\" \x14the \x13 PAGE \x14page\x15 link\x15 now.\r" +
      "A1\x07B1\x07\x07A2\x07B2\x07\x07" +
      "line one\x0bline two\x0cNext\x1fsec\x1etion\r";
    expect(wordTextToParagraphs(raw)).toEqual(["Title", "See the page link now.", "A1 | B1", "A2 | B2", "line one\nline two", "Nextsec-tion"]);
  });

  it("keeps list items and short lines of plain text on their own lines", () => {
    expect(textToParagraphs("Shopping:\n- milk\n- bread\n\nA long line of prose that was wrapped by an editor at\nsome column.")).toEqual([
      "Shopping:\n- milk\n- bread",
      "A long line of prose that was wrapped by an editor at some column.",
    ]);
  });
});
