import { describe, expect, it } from "vitest";
import { createWorld } from "../helpers/world";
import { createWebhook, receiverHost, receiverLog, verifySignature, type Received } from "./helpers";
import { EVENTS_QUEUE, deliveriesOf, runQueue, storeEvent } from "./queue";

/** Flips one bit of the character at `index`. */
function flip(text: string, index: number): string {
  return text.slice(0, index) + String.fromCharCode(text.charCodeAt(index) ^ 1) + text.slice(index + 1);
}

async function deliverOne(secret?: string): Promise<{ received: Received; secret: string }> {
  const w = await createWorld();
  const host = receiverHost("sig");
  const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/`, ...(secret ? { secret } : {}) });
  const event = await storeEvent(w.teamA.id, "message.created", { id: "msg_1", content: "Grüße, 世界" });
  await runQueue(EVENTS_QUEUE, { kind: "event", event });
  const [received] = await receiverLog(host);
  if (!received) throw new Error("nothing delivered");
  return { received, secret: secret ?? hook.secret! };
}

describe("webhook signatures (Standard Webhooks)", () => {
  for (const [label, given] of [
    ["a generated whsec_ secret", undefined],
    ["a whsec_ secret given at creation", "whsec_" + btoa("0123456789abcdef0123456789abcdef")],
    ["a plain secret given at creation", "correct horse battery staple"],
  ] as const) {
    it(`verifies with ${label} and fails when one byte of body, id or timestamp changes`, async () => {
      const { received, secret } = await deliverOne(given);
      expect(received.signature).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
      expect(Math.abs(Number(received.timestamp) - Date.now() / 1000)).toBeLessThan(300);
      expect(await verifySignature(secret, received, received.body)).toBe(true);

      for (let i = 0; i < received.body.length; i += Math.ceil(received.body.length / 7)) {
        expect(await verifySignature(secret, received, flip(received.body, i)), `body byte ${i}`).toBe(false);
      }
      expect(await verifySignature(secret, { ...received, webhookId: flip(received.webhookId, 5) }, received.body)).toBe(false);
      expect(await verifySignature(secret, { ...received, timestamp: String(Number(received.timestamp) + 1) }, received.body)).toBe(false);
      const wrong = secret.startsWith("whsec_") ? "whsec_" + btoa("x".repeat(32)) : secret + "x";
      expect(await verifySignature(wrong, received, received.body)).toBe(false);
    });
  }

  it("signs each attempt afresh but keeps webhook-id stable across retries", async () => {
    const w = await createWorld();
    const host = receiverHost("retry-sig");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/?fail=1` });
    const event = await storeEvent(w.teamA.id);
    await runQueue(EVENTS_QUEUE, { kind: "event", event });
    const [delivery] = await deliveriesOf(event.id);
    await runQueue(EVENTS_QUEUE, { kind: "delivery", deliveryId: delivery!.id });
    const log = await receiverLog(host);
    expect(log.map((r) => r.webhookId)).toEqual([event.id, event.id]);
    for (const r of log) expect(await verifySignature(hook.secret!, r, r.body)).toBe(true);
  });
});
