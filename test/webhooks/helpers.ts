import { call, json } from "../helpers/world";

/** One receiver per test: its host name keys its Durable Object in receiver-worker.mjs. */
export function receiverHost(label = "r"): string {
  return `${label}-${crypto.randomUUID().slice(0, 8)}.webhook.test`;
}

export type Received = {
  method: string;
  path: string;
  webhookId: string;
  timestamp: string;
  signature: string;
  contentType: string;
  body: string;
  status: number;
};

/** What the receiver at `host` got, in order (outbound fetches reach receiver-worker.mjs). */
export async function receiverLog(host: string): Promise<Received[]> {
  const res = await fetch(`https://${host}/__log`);
  return (await res.json()) as Received[];
}

export async function createWebhook(key: string, body: Record<string, unknown>, path = "/team/webhook") {
  const res = await call("POST", path, { key, body: { name: "Hook", events: ["*"], ...body } });
  if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${await res.text()}`);
  return json<{ id: string; secret?: string; url: string; events: string[] }>(res);
}

const encoder = new TextEncoder();

/**
 * A receiver's verification, written from the Standard Webhooks spec (not from src/): key = the
 * base64 after whsec_, or the secret's UTF-8 bytes; signature = base64 HMAC-SHA256 of id.ts.body.
 */
export async function verifySignature(
  secret: string,
  headers: { webhookId: string; timestamp: string; signature: string },
  body: string,
): Promise<boolean> {
  const keyBytes = secret.startsWith("whsec_")
    ? Uint8Array.from(atob(secret.slice(6)), (ch) => ch.charCodeAt(0))
    : encoder.encode(secret);
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const signed = encoder.encode(`${headers.webhookId}.${headers.timestamp}.${body}`);
  for (const part of headers.signature.split(" ")) {
    const [version, b64] = part.split(",");
    if (version !== "v1" || !b64) continue;
    const mac = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    if (await crypto.subtle.verify("HMAC", key, mac, signed)) return true;
  }
  return false;
}
