const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniformly random base62 string (rejection sampling, so no character is favoured). */
export function randomString(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/** Record ids carry a short type prefix so that a stray id in a log says what it is. */
export function newId(prefix: string): string {
  return `${prefix}_${randomString(20)}`;
}

export function nowIso(): string {
  return new Date().toISOString();
}
