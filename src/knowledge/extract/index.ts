import { ContentError, sniffRefusal, type KnowledgeExtension } from "../file-types";
import { csvToParagraphs } from "./csv";
import { docToParagraphs } from "./doc";
import { docxToParagraphs } from "./docx";
import { pdfToParagraphs } from "./pdf";
import { decodeUtf8, textToParagraphs } from "./text";

/**
 * The text of a knowledge file as paragraphs, by type. Throws ContentError (with a reason for the
 * user) when the content is not what the extension says or holds no text.
 */
export async function extractParagraphs(ext: KnowledgeExtension, bytes: Uint8Array): Promise<string[]> {
  const refusal = sniffRefusal(ext, bytes, true);
  if (refusal) throw new ContentError(refusal);
  let paragraphs: string[];
  try {
    paragraphs = await byType(ext, bytes);
  } catch (err) {
    if (err instanceof ContentError) throw err;
    // The parsers are deterministic on the bytes: anything they trip over is the file's damage.
    console.error(JSON.stringify({ error: "extraction failed", ext, cause: String(err) }));
    throw new ContentError(`The ${ext} file is damaged or malformed, so its text cannot be read.`);
  }
  if (!paragraphs.some((p) => /[\p{L}\p{N}]/u.test(p))) throw new ContentError("The file contains no text.");
  return paragraphs;
}

async function byType(ext: KnowledgeExtension, bytes: Uint8Array): Promise<string[]> {
  switch (ext) {
    case ".txt":
      return textToParagraphs(decodeUtf8(bytes, ext));
    case ".csv":
      return csvToParagraphs(decodeUtf8(bytes, ext));
    case ".pdf":
      return pdfToParagraphs(bytes);
    case ".docx":
      return docxToParagraphs(bytes);
    case ".doc":
      return docToParagraphs(bytes);
  }
}
