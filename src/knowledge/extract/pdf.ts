import { getDocumentProxy } from "unpdf";
import { ContentError } from "../file-types";

type Line = { text: string; y: number; size: number };

/** The subset of pdf.js's TextItem that we read. */
type TextItem = { str?: string; transform?: number[]; hasEOL?: boolean };

export const NO_TEXT_REASON =
  "The PDF has no selectable text (scanned?). Run it through OCR or upload the text as .docx or .txt.";

function pdfError(err: unknown): ContentError {
  const name = (err as { name?: string })?.name ?? "";
  if (name === "PasswordException") return new ContentError("The PDF is password-protected. Upload it without a password.");
  if (name === "InvalidPDFException" || name === "FormatError") {
    return new ContentError("The PDF is damaged or not a PDF document, so its text cannot be read.");
  }
  return new ContentError("The PDF could not be read. Save it again (e.g. 'Print to PDF') and upload it once more.");
}

/** Lines of one page, in reading order as pdf.js delivers them. */
function pageLines(items: TextItem[]): Line[] {
  const lines: Line[] = [];
  let text = "";
  let y = 0;
  let size = 0;
  const flush = () => {
    const t = text.replace(/\s+/g, " ").trim();
    if (t) lines.push({ text: t, y, size });
    text = "";
    size = 0;
  };
  for (const item of items) {
    const str = item.str ?? "";
    const [, , c = 0, d = 0, , f = 0] = item.transform ?? [];
    if (str.trim()) {
      // A new baseline means a new line even without an explicit end-of-line mark.
      if (text && Math.abs(f - y) > Math.max(2, size * 0.5)) flush();
      if (!text) y = f;
      size = Math.max(size, Math.hypot(c, d));
    }
    text += str;
    if (item.hasEOL) flush();
  }
  flush();
  return lines;
}

/**
 * Lines to paragraphs: a vertical gap clearly larger than the line spacing, or a change of font
 * size (a heading), starts a new paragraph. Lines of a paragraph are joined with spaces.
 */
function linesToParagraphs(lines: Line[]): string[] {
  const paragraphs: string[] = [];
  let current = "";
  let prev: Line | null = null;
  for (const line of lines) {
    if (prev && current) {
      const gap = prev.y - line.y;
      const sizeChanged = Math.abs(line.size - prev.size) > Math.max(prev.size, line.size) * 0.15;
      const newParagraph = sizeChanged || gap > Math.max(prev.size, line.size) * 1.6 || gap < -1;
      if (newParagraph) {
        paragraphs.push(current);
        current = line.text;
      } else {
        // A word broken at the line end ("exam-" + "ple") keeps its hyphen but loses the space.
        current += /\p{L}-$/u.test(current) ? line.text : " " + line.text;
      }
    } else {
      current = line.text;
    }
    prev = line;
  }
  if (current) paragraphs.push(current);
  return paragraphs;
}

/** The text layer of a PDF, as paragraphs. A PDF without one (a scan) is refused. */
export async function pdfToParagraphs(bytes: Uint8Array): Promise<string[]> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js takes ownership of the buffer it is given: pass a copy.
    pdf = await getDocumentProxy(bytes.slice(), {
      disableFontFace: true,
      useSystemFonts: false,
      verbosity: 0,
    });
  } catch (err) {
    throw pdfError(err);
  }
  try {
    const paragraphs: string[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const page = await pdf.getPage(n);
      const content = await page.getTextContent();
      paragraphs.push(...linesToParagraphs(pageLines(content.items as TextItem[])));
      page.cleanup();
    }
    const letters = paragraphs.join("").replace(/[^\p{L}\p{N}]/gu, "").length;
    if (letters < 20) throw new ContentError(NO_TEXT_REASON);
    return paragraphs;
  } catch (err) {
    throw err instanceof ContentError ? err : pdfError(err);
  } finally {
    await pdf.loadingTask.destroy();
  }
}
