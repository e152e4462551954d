import { unzipSync } from "fflate";
import { sniffRefusal, type KnowledgeExtension } from "../file-types";
import { CompoundFile } from "./cfb";

/** Names of the entries of a ZIP package (nothing is decompressed), or null when it is not one. */
function zipEntryNames(bytes: Uint8Array): string[] | null {
  const names: string[] = [];
  try {
    unzipSync(bytes, {
      filter: (f) => {
        names.push(f.name);
        return false;
      },
    });
    return names;
  } catch {
    return null;
  }
}

/**
 * The checks of a whole uploaded file that are cheap enough for confirm-upload: the magic
 * bytes, UTF-8 of text files, and for Word files that the container really holds a Word document
 * (not a spreadsheet or slides under a Word name). Returns the reason for a refusal, or null.
 * Text extraction (at ingestion) can still fail later, e.g. a PDF without selectable text.
 */
export function verifyContent(ext: KnowledgeExtension, bytes: Uint8Array): string | null {
  const refusal = sniffRefusal(ext, bytes, true);
  if (refusal) return refusal;
  if (ext === ".docx") {
    const names = zipEntryNames(bytes);
    if (!names) return "The file is not a valid .docx document (the ZIP package is damaged).";
    if (names.includes("word/document.xml")) return null;
    if (names.includes("xl/workbook.xml")) return "The file is an Excel workbook (.xlsx), not a Word document. Spreadsheets are not accepted.";
    if (names.includes("ppt/presentation.xml")) return "The file is a PowerPoint presentation (.pptx), not a Word document. Presentations are not accepted.";
    return "The file is a ZIP package but not a Word .docx document (it has no word/document.xml).";
  }
  if (ext === ".doc") {
    let cfb: CompoundFile;
    try {
      cfb = new CompoundFile(bytes);
    } catch {
      return "The .doc file is damaged (its compound file structure cannot be read).";
    }
    const streams = new Set(cfb.entries.filter((e) => e.type === 2).map((e) => e.name));
    if (streams.has("WordDocument")) return null;
    if (streams.has("Workbook") || streams.has("Book")) return "The file is an Excel 97-2003 workbook (.xls), not a Word document. Spreadsheets are not accepted.";
    if (streams.has("PowerPoint Document")) return "The file is a PowerPoint 97-2003 presentation (.ppt), not a Word document. Presentations are not accepted.";
    return "The file is an OLE compound file but not a Word document (no WordDocument stream).";
  }
  return null;
}
