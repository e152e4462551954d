import { describe, expect, it } from "vitest";
import { docToParagraphs } from "../../src/knowledge/extract/doc";
import { verifyContent } from "../../src/knowledge/extract/verify";

/**
 * Microsoft Word stores text that fits Windows-1252 in 8-bit ("compressed") pieces; LibreOffice,
 * which made the .doc fixture, always writes UTF-16 pieces. This builds a minimal Word 97 file
 * byte by byte ([MS-CFB] container, [MS-DOC] FIB and piece table) with one 8-bit and one UTF-16
 * piece, to test the path real Word files take.
 */
const SECTOR = 512;
const END = 0xfffffffe;
const FREE = 0xffffffff;

function cfb(streams: Array<{ name: string; data: Uint8Array }>): Uint8Array {
  // Sector 0: FAT; sector 1: directory; then each stream (padded to >= 4096 bytes: no mini stream).
  const padded = streams.map((s) => {
    const size = Math.max(4096, Math.ceil(s.data.length / SECTOR) * SECTOR);
    const d = new Uint8Array(size);
    d.set(s.data);
    return { name: s.name, data: d };
  });
  const total = 2 + padded.reduce((n, s) => n + s.data.length / SECTOR, 0);
  const out = new Uint8Array(SECTOR * (total + 1));
  const v = new DataView(out.buffer);
  [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1].forEach((b, i) => (out[i] = b));
  v.setUint16(0x18, 0x3e, true);
  v.setUint16(0x1a, 3, true);
  v.setUint16(0x1c, 0xfffe, true);
  v.setUint16(0x1e, 9, true);
  v.setUint16(0x20, 6, true);
  v.setUint32(0x2c, 1, true); // FAT sectors
  v.setUint32(0x30, 1, true); // first directory sector
  v.setUint32(0x38, 4096, true);
  v.setUint32(0x3c, END, true);
  v.setUint32(0x44, END, true);
  for (let i = 0; i < 109; i++) v.setUint32(0x4c + i * 4, i === 0 ? 0 : FREE, true);

  const fat = (i: number, value: number) => v.setUint32(SECTOR + i * 4, value, true);
  for (let i = 0; i < SECTOR / 4; i++) fat(i, FREE);
  fat(0, 0xfffffffd);
  fat(1, END);
  const dir = 2 * SECTOR;
  const entry = (n: number, name: string, type: number, start: number, size: number, child = FREE) => {
    const at = dir + n * 128;
    for (let i = 0; i < name.length; i++) v.setUint16(at + i * 2, name.charCodeAt(i), true);
    v.setUint16(at + 64, (name.length + 1) * 2, true);
    out[at + 66] = type;
    v.setUint32(at + 68, FREE, true);
    v.setUint32(at + 72, n < padded.length ? n + 1 : FREE, true);
    v.setUint32(at + 76, child, true);
    v.setUint32(at + 116, start, true);
    v.setUint32(at + 120, size, true);
  };
  entry(0, "Root Entry", 5, END, 0, 1);
  let sector = 2;
  padded.forEach((s, i) => {
    const count = s.data.length / SECTOR;
    entry(i + 1, s.name, 2, sector, s.data.length);
    out.set(s.data, SECTOR * (sector + 1));
    for (let k = 0; k < count; k++) fat(sector + k, k === count - 1 ? END : sector + k + 1);
    sector += count;
  });
  return out;
}

function wordDocument(pieces: Array<{ text: string; compressed: boolean }>): Uint8Array {
  const word = new Uint8Array(8192);
  const w = new DataView(word.buffer);
  w.setUint16(0, 0xa5ec, true);
  w.setUint16(2, 0x00c1, true);
  w.setUint16(0x0a, 0x0200, true); // fWhichTblStm: 1Table
  w.setUint16(0x20, 14, true); // csw
  w.setUint16(0x3e, 22, true); // cslw
  w.setUint16(0x98, 93, true); // cbRgFcLcb
  const table = new Uint8Array(4096);
  const t = new DataView(table.buffer);
  const n = pieces.length;
  const lcb = 4 * (n + 1) + 8 * n;
  table[0] = 0x02;
  t.setUint32(1, lcb, true);
  let cp = 0;
  let at = 2048;
  pieces.forEach((p, i) => {
    t.setUint32(5 + i * 4, cp, true);
    const fcAt = 5 + 4 * (n + 1) + i * 8 + 2;
    if (p.compressed) {
      for (let k = 0; k < p.text.length; k++) word[at + k] = p.text.charCodeAt(k);
      t.setUint32(fcAt, (at * 2) | 0x40000000, true);
      at += p.text.length;
    } else {
      for (let k = 0; k < p.text.length; k++) w.setUint16(at + k * 2, p.text.charCodeAt(k), true);
      t.setUint32(fcAt, at, true);
      at += p.text.length * 2;
    }
    cp += p.text.length;
  });
  t.setUint32(5 + n * 4, cp, true);
  w.setInt32(0x4c, cp, true); // ccpText
  w.setUint32(0x1a2, 0, true); // fcClx
  w.setUint32(0x1a6, 5 + lcb, true); // lcbClx
  return cfb([
    { name: "WordDocument", data: word },
    { name: "1Table", data: table },
  ]);
}

describe(".doc pieces as Microsoft Word writes them", () => {
  it("decodes 8-bit Windows-1252 pieces next to UTF-16 ones", () => {
    // 0x93/0x94 are curly quotes, 0x80 the euro sign, 0xE9 é in Windows-1252.
    const doc = wordDocument([
      { text: "Caf\xe9 \x93menu\x94 costs \x80 5.\rSecond paragraph ", compressed: true },
      { text: "with Ωmega.\r", compressed: false },
    ]);
    expect(verifyContent(".doc", doc)).toBeNull();
    expect(docToParagraphs(doc)).toEqual(["Café “menu” costs € 5.", "Second paragraph with Ωmega."]);
  });
});
