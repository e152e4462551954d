import { createWorld, insertKey } from "../helpers/world";
import type { Fetcher } from "../helpers/test-app";
import type { Access } from "./routes";

/** The ten callers of the matrix (ISSUE 2, Tests and CI). */
export const CALLERS = [
  "noKey",
  "badKey",
  "revokedKey",
  "pkA",
  "skA",
  "skB",
  "uskOwnerA",
  "uskAdminA",
  "uskMemberA",
  "uskOutsider",
] as const;
export type Caller = (typeof CALLERS)[number];

type Outcome = "unauthorized" | "publishableForbidden" | "forbidden" | "userKeyNeedsTeam" | "passes";

/** The documented answer of a route of class `access` to `caller`. */
export function expectedOutcome(access: Access, caller: Caller): Outcome {
  if (access === "public") return "passes";
  switch (caller) {
    case "noKey":
    case "badKey":
    case "revokedKey":
      return "unauthorized";
    case "pkA":
      return access === "chat" ? "passes" : "publishableForbidden";
    case "skA":
    case "skB":
      return access === "chat" || access === "team" ? "passes" : "forbidden";
    case "uskOwnerA":
    case "uskAdminA":
      return access === "chat" || access === "team" ? "userKeyNeedsTeam" : "passes";
    case "uskMemberA":
    case "uskOutsider":
      if (access === "chat" || access === "team") return "userKeyNeedsTeam";
      // POST/GET /team need no role anywhere; team paths need OWNER or ADMIN of that team.
      return access === "user" ? "passes" : "forbidden";
  }
}

/** Every (method, path) of an OpenAPI document as "METHOD /path". */
export function routesOf(doc: { paths: Record<string, Record<string, unknown>> }): string[] {
  const methods = new Set(["get", "post", "put", "patch", "delete", "head", "options"]);
  return Object.entries(doc.paths)
    .flatMap(([path, ops]) => Object.keys(ops).filter((m) => methods.has(m)).map((m) => `${m.toUpperCase()} ${path}`))
    .sort();
}

type World = Awaited<ReturnType<typeof createWorld>>;
type KeySet = Record<Exclude<Caller, "noKey">, string>;

/**
 * Keys for the callers, renewed every KEY_USES routes so that no key reaches its rate limit
 * (publishable: 100 a minute) however many routes the service grows.
 */
const KEY_USES = 40;

async function freshKeys(w: World): Promise<KeySet> {
  const [pkA, skA, skB, owner, admin, member, outsider] = await Promise.all([
    insertKey("publishable", { teamId: w.teamA.id }),
    insertKey("secret", { teamId: w.teamA.id }),
    insertKey("secret", { teamId: w.teamB.id }),
    insertKey("user", { userId: w.owner.id }),
    insertKey("user", { userId: w.admin.id }),
    insertKey("user", { userId: w.member.id }),
    insertKey("user", { userId: w.outsider.id }),
  ]);
  return {
    badKey: "sk_live_" + "0123456789abcdefghijABCDEFGHIJ0123456789",
    revokedKey: w.revokedKey,
    pkA: pkA.key,
    skA: skA.key,
    skB: skB.key,
    uskOwnerA: owner.key,
    uskAdminA: admin.key,
    uskMemberA: member.key,
    uskOutsider: outsider.key,
  };
}

function concretePath(path: string, teamId: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => (name === "teamId" ? teamId : `missing_${name}`));
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

async function check(
  fetcher: Fetcher,
  route: string,
  access: Access,
  caller: Caller,
  key: string | undefined,
  teamId: string,
  address: string,
): Promise<string | null> {
  const [method = "GET", path = "/"] = route.split(" ");
  const headers: Record<string, string> = { "cf-connecting-ip": address };
  if (key) headers["x-api-key"] = key;
  let body: string | undefined;
  if (BODY_METHODS.has(method)) {
    headers["content-type"] = "application/json";
    body = "{}";
  }
  const res = await fetcher(new Request(`http://api.test${concretePath(path, teamId)}`, { method, headers, body }));
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    // Kept empty: the JSON check below reports it.
  }
  const expected = expectedOutcome(access, caller);
  const got = `${res.status} ${text.slice(0, 200)}`;
  const fail = (why: string) => `${route} as ${caller}: expected ${expected} (${why}), got ${got}`;

  if (res.status >= 400 && !(res.headers.get("content-type") ?? "").includes("application/json")) {
    return fail("error bodies are JSON");
  }
  if (key && expected !== "unauthorized" && access !== "public" && !res.headers.get("x-ratelimit-limit")) {
    return fail("X-RateLimit-* headers on every response to a valid key");
  }
  const message = typeof parsed.message === "string" ? parsed.message : "";
  switch (expected) {
    case "unauthorized":
      if (res.status !== 401 || Object.keys(parsed).join() !== "message") return fail("401 with only a message");
      return null;
    case "publishableForbidden": {
      const list = parsed.allowedEndpoints;
      const ok =
        res.status === 403 &&
        Object.keys(parsed).sort().join() === "allowedEndpoints,error,message,upgradeInstructions" &&
        parsed.error === "Forbidden" &&
        typeof parsed.message === "string" &&
        typeof parsed.upgradeInstructions === "string" &&
        Array.isArray(list) &&
        list.length === 4 &&
        list.every((e) => typeof e === "string" && /^(GET|POST) \/chat\S* - \S/.test(e));
      return ok ? null : fail("403 with the SPEC body");
    }
    case "forbidden":
      if (res.status !== 403 || parsed.error !== "Forbidden" || typeof parsed.message !== "string") {
        return fail("403 Forbidden");
      }
      return null;
    case "userKeyNeedsTeam":
      return res.status === 400 && message.includes("/team/{teamId}/") ? null : fail("400 naming /team/{teamId}/");
    case "passes":
      if ([401, 403, 429].includes(res.status) || res.status >= 500) return fail("past auth, no 401/403/429/5xx");
      // A 400 is fine (the matrix sends `{}` and made-up ids), but not the user-key pointer.
      if (res.status === 400 && message.includes("/team/{teamId}")) return fail("not the user-key 400");
      return null;
  }
}

/**
 * Calls every route of `table` as every caller. Routes run a few at a time; the ten callers of
 * one route run at once. Requests without a valid key come from a fresh address per route so
 * that the per-address limit for them is never reached.
 */
export async function runMatrix(fetcher: Fetcher, table: Record<string, Access>) {
  const w = await createWorld();
  const routes = Object.keys(table).sort();
  const keySets: KeySet[] = [];
  for (let i = 0; i < routes.length; i += KEY_USES) keySets.push(await freshKeys(w));

  const failures: string[] = [];
  let calls = 0;
  const BATCH = 6;
  for (let start = 0; start < routes.length; start += BATCH) {
    await Promise.all(
      routes.slice(start, start + BATCH).map(async (route, offset) => {
        const index = start + offset;
        const keys = keySets[Math.floor(index / KEY_USES)] as KeySet;
        const address = `10.${(index >> 8) & 255}.${index & 255}.7`;
        const access = table[route] as Access;
        const results = await Promise.all(
          CALLERS.map((caller) =>
            check(fetcher, route, access, caller, caller === "noKey" ? undefined : keys[caller], w.teamA.id, address),
          ),
        );
        calls += results.length;
        for (const r of results) if (r) failures.push(r);
      }),
    );
  }
  return { failures: failures.sort(), calls, world: w };
}
