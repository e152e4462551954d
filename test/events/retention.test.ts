import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db/client";
import { HISTORY_RETENTION_DAYS, pruneHistory } from "../../src/events/retention";
import { createTeam } from "../helpers/world";

const DAY = 24 * 3600 * 1000;

async function seed(teamId: string, webhookId: string, label: string, ageDays: number, state: string | null, dispatched = true) {
  const at = new Date(Date.now() - ageDays * DAY).toISOString();
  await env.DB.prepare("INSERT INTO events (id, team_id, type, data, created_at, dispatched_at) VALUES (?, ?, 'chat.created', '{}', ?, ?)")
    .bind(`evt_${label}`, teamId, at, dispatched ? at : null)
    .run();
  if (!state) return;
  await env.DB.prepare(
    "INSERT INTO webhook_deliveries (id, team_id, webhook_id, event_id, event_type, state, created_at, updated_at) VALUES (?, ?, ?, ?, 'chat.created', ?, ?, ?)",
  )
    .bind(`dlv_${label}`, teamId, webhookId, `evt_${label}`, state, at, at)
    .run();
  await env.DB.prepare(
    "INSERT INTO webhook_delivery_attempts (id, delivery_id, attempt, trigger, status_code, duration_ms, created_at) VALUES (?, ?, 1, 'queue', 200, 5, ?)",
  )
    .bind(`att_${label}`, `dlv_${label}`, at)
    .run();
}

const ids = async (table: string) =>
  (await env.DB.prepare(`SELECT id FROM ${table} ORDER BY id`).all<{ id: string }>()).results.map((r) => r.id);

describe("history retention (cron sweep)", () => {
  it(`deletes finished events and deliveries older than ${HISTORY_RETENTION_DAYS} days, keeps the rest`, async () => {
    const team = await createTeam();
    const webhookId = "whk_retention";
    await env.DB.prepare("INSERT INTO webhooks (id, team_id, name, url, events, secret, created_at) VALUES (?, ?, 'h', 'https://x.test', '[\"*\"]', 'sealed', ?)")
      .bind(webhookId, team.id, new Date().toISOString())
      .run();
    const old = HISTORY_RETENTION_DAYS + 1;
    await seed(team.id, webhookId, "old_done", old, "succeeded");
    await seed(team.id, webhookId, "old_failed", old, "failed");
    await seed(team.id, webhookId, "old_pending", old, "pending");
    await seed(team.id, webhookId, "old_nohook", old, null);
    await seed(team.id, webhookId, "old_undispatched", old, null, false);
    await seed(team.id, webhookId, "recent_done", 1, "succeeded");

    expect(await pruneHistory(createDb(env.DB))).toEqual({ deliveries: 2, events: 3 });

    expect(await ids("webhook_deliveries")).toEqual(["dlv_old_pending", "dlv_recent_done"]);
    expect(await ids("webhook_delivery_attempts")).toEqual(["att_old_pending", "att_recent_done"]);
    // Kept: an event with a pending delivery, one never dispatched (the outbox sweep still owes it), a recent one.
    expect(await ids("events")).toEqual(["evt_old_pending", "evt_old_undispatched", "evt_recent_done"]);
    expect(await pruneHistory(createDb(env.DB))).toEqual({ deliveries: 0, events: 0 });
  });
});
