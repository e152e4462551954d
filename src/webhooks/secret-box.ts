import { fromBase64, toBase64 } from "./signature";

/**
 * Webhook signing secrets at rest: AES-GCM under a key derived (SHA-256) from the Worker secret
 * WEBHOOK_SECRET_KEY. Signing needs the secret back, so it cannot be hashed like an API key;
 * encrypting it means a leaked database or backup does not let anyone forge deliveries.
 * Stored form: "v1.<base64 iv>.<base64 ciphertext>".
 */

const DEV_KEY = "dev-only-webhook-secret-key-do-not-use-in-production";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const keys = new Map<string, Promise<CryptoKey>>();

function boxKey(env: Env): Promise<CryptoKey> {
  const material = env.WEBHOOK_SECRET_KEY;
  // A configuration error, not a client's: surfaces as a 500 with a request id and this log line.
  if (!material) throw new Error("WEBHOOK_SECRET_KEY is not set: run `wrangler secret put WEBHOOK_SECRET_KEY`");
  if (env.ENVIRONMENT === "production" && material === DEV_KEY) {
    throw new Error("WEBHOOK_SECRET_KEY is the development value: set a real Worker secret in production");
  }
  let key = keys.get(material);
  if (!key) {
    key = crypto.subtle
      .digest("SHA-256", encoder.encode(material))
      .then((raw) => crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]));
    keys.set(material, key);
  }
  return key;
}

export async function sealSecret(env: Env, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await boxKey(env), encoder.encode(secret));
  return `v1.${toBase64(iv)}.${toBase64(new Uint8Array(sealed))}`;
}

/** Opened secrets by sealed value, per isolate (memory only, never logged): one decrypt per endpoint. */
const opened = new Map<string, Promise<string>>();
const MAX_OPENED = 1000;

async function decrypt(env: Env, stored: string): Promise<string> {
  const [version, iv, sealed] = stored.split(".");
  if (version !== "v1" || !iv || !sealed) throw new Error("unreadable webhook secret");
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: fromBase64(iv) }, await boxKey(env), fromBase64(sealed));
  return decoder.decode(plain);
}

export function openSecret(env: Env, stored: string): Promise<string> {
  let secret = opened.get(stored);
  if (!secret) {
    if (opened.size >= MAX_OPENED) opened.clear();
    secret = decrypt(env, stored);
    // A failure (wrong key) must not stick: the next call tries again.
    secret.catch(() => opened.delete(stored));
    opened.set(stored, secret);
  }
  return secret;
}
