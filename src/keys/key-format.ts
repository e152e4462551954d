import type { KeyType } from "../db/schema";
import { sha256Hex } from "../lib/crypto";
import { randomString } from "../lib/ids";

export const KEY_PREFIXES: Record<KeyType, string> = {
  publishable: "pk_live_",
  secret: "sk_live_",
  user: "usk_live_",
};

/** 40 base62 characters: about 238 bits of randomness after the type prefix. */
const RANDOM_PART_LENGTH = 40;
/** Enough to tell keys apart in a listing without weakening them. */
const DISPLAY_PREFIX_EXTRA = 4;

export type NewKey = { plaintext: string; hash: string; prefix: string };

export async function generateKey(type: KeyType): Promise<NewKey> {
  const plaintext = KEY_PREFIXES[type] + randomString(RANDOM_PART_LENGTH);
  return { plaintext, hash: await sha256Hex(plaintext), prefix: displayPrefix(plaintext, type) };
}

export function displayPrefix(plaintext: string, type: KeyType): string {
  return plaintext.slice(0, KEY_PREFIXES[type].length + DISPLAY_PREFIX_EXTRA);
}

/** The type a key claims by its prefix, or null if it has none of ours (then it cannot be valid). */
export function keyTypeOf(plaintext: string): KeyType | null {
  // usk_ first: no prefix is a prefix of another, but keep the longest-first habit.
  for (const type of ["user", "secret", "publishable"] as const) {
    const prefix = KEY_PREFIXES[type];
    if (plaintext.startsWith(prefix) && plaintext.length >= prefix.length + 32) return type;
  }
  return null;
}
