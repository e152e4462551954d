/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): headers webhook-id,
 * webhook-timestamp and webhook-signature = "v1," + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")).
 *
 * The HMAC key: for a secret "whsec_<base64>", the base64-decoded bytes after the prefix (what the
 * Standard Webhooks libraries do); for any other secret, its UTF-8 bytes.
 */

const encoder = new TextEncoder();
export const SECRET_PREFIX = "whsec_";
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

export function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** A new secret: whsec_ + base64 of 32 random bytes. */
export function generateSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

/**
 * Why a user-supplied secret is unusable, or null. A whsec_ secret must carry 24 to 64 base64
 * bytes, so that it means the same to us and to a Standard Webhooks library.
 */
export function secretProblem(secret: string): string | null {
  if (!secret.startsWith(SECRET_PREFIX)) return null;
  const rest = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(rest)) return "a secret starting with whsec_ must continue with base64";
  const bytes = fromBase64(rest).length;
  if (bytes < 24 || bytes > 64) return "a whsec_ secret must encode 24 to 64 bytes";
  return null;
}

export function signingKeyBytes(secret: string): Uint8Array {
  return secret.startsWith(SECRET_PREFIX) ? fromBase64(secret.slice(SECRET_PREFIX.length)) : encoder.encode(secret);
}

/** Imported HMAC keys by secret, per isolate: a fan-out signs for the same endpoints again and again. */
const hmacKeys = new Map<string, Promise<CryptoKey>>();
const MAX_CACHED_KEYS = 1000;

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = hmacKeys.get(secret);
  if (!key) {
    if (hmacKeys.size >= MAX_CACHED_KEYS) hmacKeys.clear();
    key = crypto.subtle.importKey("raw", signingKeyBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    hmacKeys.set(secret, key);
  }
  return key;
}

export async function sign(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(`${id}.${timestamp}.${body}`));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}
