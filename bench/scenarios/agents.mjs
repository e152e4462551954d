// Agents: the cost of reading an agent (one D1 read, sub-agent lookup, prompt rendering) next to the
// authenticated baseline, and of versioned updates. An update is a read batch plus one write batch
// (agent row + immutable version + event outbox row); with all workers writing the SAME agent,
// optimistic concurrency makes losers re-read and retry, which is the worst case for one agent.

/** @type {import("../lib/scenario.mjs").Scenario} */
export default {
  name: "agents",
  description: "GET /agent/{id} (supervisor) and GET /agent vs GET /team/{teamId}; PUT /agent/{id}: one agent per worker vs all workers on one agent",
  async run({ baseUrl, keys, api, compare, ratio, settings }) {
    const sk = keys.secretKey;
    const specialists = [];
    for (let i = 0; i < 5; i++) {
      specialists.push(await api("/agent", { method: "POST", key: sk, body: { name: `Specialist ${i}`, description: `Topic ${i}`, notes: "n" } }));
    }
    for (let i = 0; i < 14; i++) await api("/agent", { method: "POST", key: sk, body: { name: `Filler ${i}` } });
    const supervisor = await api("/agent", {
      method: "POST",
      key: sk,
      body: { name: "Front desk", type: "supervisor", subAgents: specialists.map((s) => s.id), routing: { before: "Shops." } },
    });
    const hot = await api("/agent", { method: "POST", key: sk, body: { name: "Hot", description: "written by every worker" } });
    // Uncontended writes: one agent per worker slot. The load generator reads target.url for every
    // request, so a getter hands out the agents round-robin.
    const own = [];
    for (let i = 0; i < settings.concurrency * 4; i++) own.push(await api("/agent", { method: "POST", key: sk, body: { name: `Own ${i}` } }));

    const put = { method: "PUT", headers: { "x-api-key": sk, "content-type": "application/json" }, body: JSON.stringify({ temperature: 0.5 }) };
    let next = 0;
    const spread = { name: "PUT /agent/{id} (agent per worker)", init: put };
    Object.defineProperty(spread, "url", { enumerable: true, get: () => `${baseUrl}/agent/${own[next++ % own.length].id}` });

    const team = { name: "GET /team/{teamId} (usk)", url: `${baseUrl}/team/${keys.teamId}`, init: { headers: { "x-api-key": keys.userKey } } };
    const read = { name: "GET /agent/{id} (supervisor, 5 subs)", url: `${baseUrl}/agent/${supervisor.id}`, init: { headers: { "x-api-key": sk } } };
    const list = { name: "GET /agent (21+ agents)", url: `${baseUrl}/agent`, init: { headers: { "x-api-key": sk } } };
    const contended = { name: "PUT /agent/{id} (all workers, one agent)", url: `${baseUrl}/agent/${hot.id}`, init: put };

    const [t, r, l, s, c] = await compare([team, read, list, spread, contended], settings);
    const versions = await api(`/agent/${hot.id}/versions`, { key: sk });
    const numbers = versions.versions.map((v) => v.version);
    const gapless = numbers.every((n, i) => n === i + 1) && versions.latestVersion === numbers.length;
    console.log(`   hot agent: ${numbers.length} versions written, gapless: ${gapless}`);
    if (!gapless) throw new Error("the hot agent's version history has gaps");
    return {
      results: [t, r, l, s, c],
      ratios: [
        ratio("agent read / authenticated team read (req/s)", r, t, 0.5),
        ratio("agent list / authenticated team read (req/s)", l, t, 0.5),
        ratio("update (agent per worker) / agent read (req/s)", s, r),
        ratio("update (one agent, all workers) / update (agent per worker) (req/s)", c, s),
      ],
    };
  },
};
