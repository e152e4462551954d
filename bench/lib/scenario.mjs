// The contract of a bench scenario (bench/scenarios/*.mjs, default export). Types only.

/**
 * @typedef {object} ScenarioContext
 * @property {string} baseUrl            the running `wrangler dev`, e.g. http://127.0.0.1:54321
 * @property {{ userId: string, teamId: string, publishableKey: string, secretKey: string, userKey: string }} keys
 *           a user who OWNs a team, with the team's publishable and secret keys
 * @property {{ concurrency: number, durationMs: number, rounds: number }} settings   from the command line
 * @property {typeof import("./load.mjs").load} load          measure one target
 * @property {typeof import("./load.mjs").compare} compare    measure targets in alternating rounds
 * @property {typeof import("./report.mjs").ratio} ratio      a throughput ratio with an optional target
 * @property {(path: string, init?: { method?: string, key?: string, body?: unknown }) => Promise<any>} api
 *           one JSON call for set-up (throws unless 2xx)
 *
 * @typedef {object} Scenario
 * @property {string} name
 * @property {string} description
 * @property {(ctx: ScenarioContext) => Promise<{ results: import("./load.mjs").Result[], ratios?: ReturnType<typeof import("./report.mjs").ratio>[] }>} run
 */
export {};
