import { ContentError } from "../file-types";

/**
 * A small reader for the OLE Compound File Binary format ([MS-CFB]), the container of legacy
 * .doc files: header, FAT (through the DIFAT), mini FAT, directory, and stream reads.
 * Only reading is needed; every chain walk is bounded so a damaged file cannot loop.
 */
const FREE = 0xffffffff;
const END_OF_CHAIN = 0xfffffffe;
const SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

export type CfbEntry = { name: string; type: number; start: number; size: number };

const damaged = () => new ContentError("The .doc file is damaged (its compound file structure cannot be read).");

export class CompoundFile {
  private readonly view: DataView;
  private readonly sectorSize: number;
  private readonly miniSectorSize: number;
  private readonly miniCutoff: number;
  private readonly fat: Uint32Array;
  private readonly miniFat: Uint32Array;
  readonly entries: CfbEntry[];
  private miniStream: Uint8Array | null = null;

  constructor(private readonly bytes: Uint8Array) {
    if (bytes.length < 512 || !SIGNATURE.every((b, i) => bytes[i] === b)) {
      throw new ContentError("The file is not a Word 97-2003 .doc document (no OLE compound file header).");
    }
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const sectorShift = this.u16(0x1e);
    const miniShift = this.u16(0x20);
    if ((sectorShift !== 9 && sectorShift !== 12) || miniShift !== 6) throw damaged();
    this.sectorSize = 1 << sectorShift;
    this.miniSectorSize = 1 << miniShift;
    this.miniCutoff = this.u32(0x38);

    // DIFAT: 109 entries in the header, then a chain of DIFAT sectors.
    const fatSectors: number[] = [];
    const numFat = this.u32(0x2c);
    for (let i = 0; i < 109 && fatSectors.length < numFat; i++) fatSectors.push(this.u32(0x4c + i * 4));
    let difat = this.u32(0x44);
    for (let n = this.u32(0x48); n > 0 && difat < END_OF_CHAIN && fatSectors.length < numFat; n--) {
      const base = this.sectorOffset(difat);
      const perSector = this.sectorSize / 4 - 1;
      for (let i = 0; i < perSector && fatSectors.length < numFat; i++) fatSectors.push(this.u32(base + i * 4));
      difat = this.u32(base + perSector * 4);
    }
    const fat = new Uint32Array((fatSectors.length * this.sectorSize) / 4);
    fatSectors.forEach((s, i) => fat.set(this.sectorWords(s), (i * this.sectorSize) / 4));
    this.fat = fat;

    const miniFatBytes = this.readChain(this.u32(0x3c), Number.POSITIVE_INFINITY, this.fat);
    this.miniFat = new Uint32Array(miniFatBytes.buffer, miniFatBytes.byteOffset, Math.floor(miniFatBytes.length / 4));

    const dir = this.readChain(this.u32(0x30), Number.POSITIVE_INFINITY, this.fat);
    const dirView = new DataView(dir.buffer, dir.byteOffset, dir.byteLength);
    this.entries = [];
    for (let off = 0; off + 128 <= dir.length; off += 128) {
      const nameLength = Math.min(dirView.getUint16(off + 64, true), 64);
      const type = dir[off + 66]!;
      let name = "";
      for (let i = 0; i + 1 < nameLength - 1; i += 2) name += String.fromCharCode(dirView.getUint16(off + i, true));
      this.entries.push({ name, type, start: dirView.getUint32(off + 116, true), size: dirView.getUint32(off + 120, true) });
    }
    if (this.entries[0]?.type !== 5) throw damaged();
  }

  private u16(off: number) {
    return this.view.getUint16(off, true);
  }
  private u32(off: number) {
    return this.view.getUint32(off, true);
  }
  private sectorOffset(sector: number): number {
    const off = (sector + 1) * this.sectorSize;
    if (off >= this.bytes.length) throw damaged();
    return off;
  }
  private sectorWords(sector: number): Uint32Array {
    const off = this.sectorOffset(sector);
    const out = new Uint32Array(this.sectorSize / 4);
    for (let i = 0; i < out.length && off + i * 4 + 4 <= this.bytes.length; i++) out[i] = this.u32(off + i * 4);
    return out;
  }

  /** Follows a sector chain in the FAT (or, with the mini FAT, in the mini stream). */
  private readChain(start: number, size: number, table: Uint32Array, mini = false): Uint8Array {
    const unit = mini ? this.miniSectorSize : this.sectorSize;
    const source = mini ? this.miniStreamBytes() : this.bytes;
    const parts: Uint8Array[] = [];
    let total = 0;
    let sector = start;
    for (let steps = 0; sector !== END_OF_CHAIN && sector !== FREE && total < size; steps++) {
      if (steps > table.length || sector >= table.length) throw damaged();
      const off = mini ? sector * unit : (sector + 1) * unit;
      if (off >= source.length) throw damaged();
      const part = source.subarray(off, Math.min(off + unit, source.length));
      parts.push(part);
      total += part.length;
      sector = table[sector]!;
    }
    const out = new Uint8Array(Math.min(total, size));
    let at = 0;
    for (const p of parts) {
      const n = Math.min(p.length, out.length - at);
      out.set(p.subarray(0, n), at);
      at += n;
    }
    return out;
  }

  private miniStreamBytes(): Uint8Array {
    if (!this.miniStream) {
      const root = this.entries[0]!;
      this.miniStream = this.readChain(root.start, root.size, this.fat);
    }
    return this.miniStream;
  }

  /** The bytes of the first stream with this name, or null. */
  stream(name: string): Uint8Array | null {
    const entry = this.entries.find((e) => e.type === 2 && e.name === name);
    if (!entry) return null;
    if (entry.size < this.miniCutoff) return this.readChain(entry.start, entry.size, this.miniFat, true);
    return this.readChain(entry.start, entry.size, this.fat);
  }
}
