import { ContentError } from "../file-types";
import { CompoundFile } from "./cfb";

/**
 * Text of a legacy Word 97-2003 binary document ([MS-DOC]): the File Information Block at the
 * start of the WordDocument stream locates the piece table (in the 0Table or 1Table stream),
 * which maps the character positions of the main text to runs of bytes in WordDocument, each
 * either 8-bit (Windows-1252) or UTF-16LE.
 */

// Windows-1252 differs from Latin-1 only in 0x80-0x9F.
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function decodeCp1252(bytes: Uint8Array): string {
  let out = "";
  for (const b of bytes) out += String.fromCharCode(b >= 0x80 && b < 0xa0 ? CP1252_HIGH[b - 0x80]! : b);
  return out;
}

function decodeUtf16le(bytes: Uint8Array): string {
  return new TextDecoder("utf-16le").decode(bytes);
}

type Piece = { cpStart: number; cpEnd: number; fc: number; compressed: boolean };

function readPieceTable(table: Uint8Array, fcClx: number, lcbClx: number): Piece[] {
  if (fcClx + lcbClx > table.length || lcbClx === 0) throw damagedDoc();
  const view = new DataView(table.buffer, table.byteOffset + fcClx, lcbClx);
  let at = 0;
  // Skip the Prc entries (property modifiers) that may precede the piece table.
  while (at < lcbClx && view.getUint8(at) === 0x01) at += 3 + view.getInt16(at + 1, true);
  if (at >= lcbClx || view.getUint8(at) !== 0x02) throw damagedDoc();
  const lcb = view.getUint32(at + 1, true);
  const plc = at + 5;
  if (plc + lcb > lcbClx || lcb < 16) throw damagedDoc();
  const n = (lcb - 4) / 12;
  if (!Number.isInteger(n)) throw damagedDoc();
  const pieces: Piece[] = [];
  for (let i = 0; i < n; i++) {
    const cpStart = view.getUint32(plc + i * 4, true);
    const cpEnd = view.getUint32(plc + (i + 1) * 4, true);
    const fcRaw = view.getUint32(plc + (n + 1) * 4 + i * 8 + 2, true);
    const compressed = (fcRaw & 0x40000000) !== 0;
    const fc = fcRaw & 0x3fffffff;
    pieces.push({ cpStart, cpEnd, fc: compressed ? fc / 2 : fc, compressed });
  }
  return pieces;
}

const damagedDoc = () => new ContentError("The .doc file is damaged (its text table cannot be read).");

/** The main text (character positions 0..ccpText) with Word's special characters still in. */
export function docMainText(bytes: Uint8Array): string {
  const cfb = new CompoundFile(bytes);
  const word = cfb.stream("WordDocument");
  if (!word || word.length < 0x1aa) {
    throw new ContentError("The file is an OLE compound file but not a Word document (no WordDocument stream).");
  }
  const fib = new DataView(word.buffer, word.byteOffset, word.byteLength);
  if (fib.getUint16(0, true) !== 0xa5ec) throw new ContentError("The .doc file is not a Word document (bad header).");
  if (fib.getUint16(2, true) < 0xc0) {
    throw new ContentError("The .doc file is in the Word 6.0/95 format, which is not supported. Save it as .docx.");
  }
  const flags = fib.getUint16(0x0a, true);
  if (flags & 0x0100) throw new ContentError("The .doc file is password-protected. Upload it without a password.");
  const table = cfb.stream(flags & 0x0200 ? "1Table" : "0Table");
  if (!table) throw damagedDoc();

  // FibBase (32 bytes), then csw + FibRgW, cslw + FibRgLw, cbRgFcLcb + FibRgFcLcb.
  const csw = fib.getUint16(0x20, true);
  const rgLw = 0x22 + csw * 2 + 2;
  const cslw = fib.getUint16(rgLw - 2, true);
  const rgFcLcb = rgLw + cslw * 4 + 2;
  if (rgFcLcb + 34 * 8 > word.length) throw damagedDoc();
  const ccpText = fib.getInt32(rgLw + 3 * 4, true);
  const fcClx = fib.getUint32(rgFcLcb + 33 * 8, true);
  const lcbClx = fib.getUint32(rgFcLcb + 33 * 8 + 4, true);

  let text = "";
  for (const piece of readPieceTable(table, fcClx, lcbClx)) {
    const start = Math.max(piece.cpStart, 0);
    const end = Math.min(piece.cpEnd, ccpText);
    if (end <= start) continue;
    const count = end - start;
    const skip = start - piece.cpStart;
    if (piece.compressed) {
      const from = piece.fc + skip;
      if (from + count > word.length) throw damagedDoc();
      text += decodeCp1252(word.subarray(from, from + count));
    } else {
      const from = piece.fc + skip * 2;
      if (from + count * 2 > word.length) throw damagedDoc();
      text += decodeUtf16le(word.subarray(from, from + count * 2));
    }
  }
  return text;
}

/**
 * Word's special characters to plain paragraphs: field codes (between 0x13 and 0x14) are dropped
 * and field results kept; 0x0D ends a paragraph, 0x0B is a line break, 0x07 ends a table cell
 * (two in a row end a table row).
 */
export function wordTextToParagraphs(raw: string): string[] {
  let out = "";
  const fields: Array<"code" | "result"> = [];
  for (const ch of raw) {
    const c = ch.charCodeAt(0);
    if (c === 0x13) fields.push("code");
    else if (c === 0x14) {
      if (fields.length) fields[fields.length - 1] = "result";
    } else if (c === 0x15) fields.pop();
    else if (fields.includes("code")) continue;
    else if (c === 0x0d || c === 0x0c) out += "\r";
    else if (c === 0x0b) out += "\n";
    else if (c === 0x07) out += "\x07";
    else if (c === 0x09) out += " ";
    else if (c === 0x1e) out += "-";
    else if (c === 0xa0) out += " ";
    else if (c >= 0x20 && c !== 0x1f) out += ch;
  }
  const paragraphs: string[] = [];
  for (const para of out.replace(/\x07\x07/g, "\x07\r").split("\r")) {
    const cells = para.split("\x07").map((cell) => cell.replace(/[ \t]+/g, " ").trim());
    const p = cells.filter(Boolean).join(" | ");
    if (p) paragraphs.push(p);
  }
  return paragraphs;
}

export function docToParagraphs(bytes: Uint8Array): string[] {
  return wordTextToParagraphs(docMainText(bytes));
}
