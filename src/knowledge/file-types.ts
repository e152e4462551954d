/**
 * The knowledge file types (SPEC.md: .txt, .doc, .docx, .pdf, .csv) and the checks of their
 * content. Everything else, media and spreadsheets and slides included, is refused by name.
 */
export const ACCEPTED_EXTENSIONS = [".txt", ".doc", ".docx", ".pdf", ".csv"] as const;
export type KnowledgeExtension = (typeof ACCEPTED_EXTENSIONS)[number];

export const CONTENT_TYPES: Record<KnowledgeExtension, string> = {
  ".txt": "text/plain; charset=utf-8",
  ".csv": "text/csv; charset=utf-8",
  ".pdf": "application/pdf",
  ".doc": "application/msword",
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
};

/** A refusal of the content itself, with a reason written for the user. Never retried. */
export class ContentError extends Error {}

/** The lower-cased extension of a filename, "" when it has none. */
export function extensionOf(filename: string): string {
  const dot = filename.lastIndexOf(".");
  if (dot <= 0 || dot === filename.length - 1) return "";
  return filename.slice(dot).toLowerCase();
}

export function acceptedExtension(filename: string): KnowledgeExtension | null {
  const ext = extensionOf(filename);
  return (ACCEPTED_EXTENSIONS as readonly string[]).includes(ext) ? (ext as KnowledgeExtension) : null;
}

export function typeRefusal(filename: string): string {
  const ext = extensionOf(filename);
  const what = ext ? `Files of type ${ext} are not accepted` : "Files without an extension are not accepted";
  return `${what}. Accepted types: ${ACCEPTED_EXTENSIONS.join(", ")}.`;
}

const PDF_MAGIC = [0x25, 0x50, 0x44, 0x46, 0x2d]; // %PDF-
const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]; // PK\3\4
const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

function startsWith(bytes: Uint8Array, magic: number[], at = 0): boolean {
  return magic.every((b, i) => bytes[at + i] === b);
}

/** PDF readers accept a header anywhere in the first KiB; so do we. */
function hasPdfHeader(head: Uint8Array): boolean {
  const limit = Math.min(head.length - PDF_MAGIC.length, 1024);
  for (let i = 0; i <= limit; i++) if (startsWith(head, PDF_MAGIC, i)) return true;
  return false;
}

/**
 * Checks that the first bytes of a file match its extension. `head` may be a prefix of the file
 * (confirm reads only the first KiBs; ingestion checks the whole structure again). Returns the
 * reason for a refusal, or null.
 */
export function sniffRefusal(ext: KnowledgeExtension, head: Uint8Array, isWholeFile: boolean): string | null {
  if (head.length === 0) return "The file is empty.";
  switch (ext) {
    case ".pdf":
      return hasPdfHeader(head) ? null : "The file is not a PDF document (it does not start with %PDF-).";
    case ".docx":
      return startsWith(head, ZIP_MAGIC)
        ? null
        : "The file is not a Word .docx document (a .docx is a ZIP package; this file is not one).";
    case ".doc":
      if (startsWith(head, CFB_MAGIC)) return null;
      if (startsWith(head, ZIP_MAGIC)) return "The file is a .docx (Office Open XML) document named .doc: rename it to .docx.";
      return "The file is not a Word 97-2003 .doc document (no OLE compound file header).";
    case ".txt":
    case ".csv":
      return textRefusal(head, isWholeFile, ext);
  }
}

/** Text must be UTF-8 without NUL bytes; a prefix may end inside a multi-byte character. */
export function textRefusal(bytes: Uint8Array, isWholeFile: boolean, ext: ".txt" | ".csv"): string | null {
  const kind = ext === ".csv" ? "CSV" : "text";
  if (bytes.includes(0)) return `The file is not a ${kind} file (it contains binary data).`;
  let view = bytes;
  if (!isWholeFile) {
    // Drop a trailing incomplete UTF-8 sequence (at most 3 bytes) before validating the prefix.
    let cut = view.length;
    for (let i = 1; i <= 3 && i <= view.length; i++) {
      const b = view[view.length - i]!;
      if ((b & 0xc0) === 0x80) continue; // continuation byte
      if (b >= 0xc0) cut = view.length - i; // lead byte of a sequence that may be cut
      break;
    }
    view = view.subarray(0, cut);
  }
  try {
    new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(view);
    return null;
  } catch {
    return `The file is not a ${kind} file in UTF-8 encoding. Save it as UTF-8 and upload it again.`;
  }
}
