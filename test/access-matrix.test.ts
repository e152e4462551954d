import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { probeRouter, testApp, type Fetcher } from "./helpers/test-app";
import { CALLERS, routesOf, runMatrix } from "./access/matrix";
import { ROUTES, scoped, type Access } from "./access/routes";

// The table and how to extend it: test/access/routes.ts. The rules per class: test/access/matrix.ts.

const worker: Fetcher = (request) => exports.default.fetch(request);
/** Hundreds of requests: generous on a loaded machine (typically a few seconds). */
const MATRIX_TIMEOUT = 120_000;

async function documentedRoutes(fetcher: Fetcher): Promise<string[]> {
  const res = await fetcher(new Request("http://api.test/openapi.json"));
  expect(res.status).toBe(200);
  return routesOf(await res.json());
}

describe("access matrix of the Worker", () => {
  it("has an entry for every route of /openapi.json and none for a route that does not exist", async () => {
    const documented = await documentedRoutes(worker);
    const listed = Object.keys(ROUTES).sort();
    expect({
      routesWithoutEntry: documented.filter((r) => !(r in ROUTES)),
      entriesWithoutRoute: listed.filter((r) => !documented.includes(r)),
    }).toEqual({ routesWithoutEntry: [], entriesWithoutRoute: [] });
  });

  it("gives every route x caller its documented status", async () => {
    const { failures, calls } = await runMatrix(worker, ROUTES);
    expect(failures).toEqual([]);
    expect(calls).toBe(Object.keys(ROUTES).length * CALLERS.length);
  }, MATRIX_TIMEOUT);
});

describe("the API description", () => {
  it("is OpenAPI 3.1 with the ApiKey scheme on every route that needs a key", async () => {
    const doc = await (await worker(new Request("http://api.test/openapi.json"))).json<{
      openapi: string;
      paths: Record<string, Record<string, { security?: unknown[] }>>;
      components: { securitySchemes: Record<string, { type: string; in: string; name: string }> };
    }>();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
    const withoutSecurity = routesOf(doc).filter((route) => {
      const [method = "", path = ""] = route.split(" ");
      return ROUTES[route] !== "public" && !doc.paths[path]?.[method.toLowerCase()]?.security?.length;
    });
    expect(withoutSecurity).toEqual([]);
  });

  it("serves a reference page at /docs that needs no network", async () => {
    const res = await worker(new Request("http://api.test/docs"));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain("openapi.json");
    expect(html).not.toMatch(/(src|href)=["']?(https?:)?\/\//i);
  });
});

/**
 * The same rules around a stand-in team-scoped router, so that the bare and /team/{teamId}
 * behaviour of team-scoped routes is proven by the foundation itself, whatever resources exist.
 */
describe("access matrix of a team-scoped router", () => {
  const app = testApp([probeRouter()]);
  const probeRoutes: Record<string, Access> = {
    ...scoped("POST /chat", "chat"),
    ...scoped("GET /chat/{chatId}", "chat"),
    ...scoped("POST /probe"),
  };

  it("serves each team-scoped route at the root and under /team/{teamId}", async () => {
    const documented = await documentedRoutes(app);
    expect(documented).toEqual(expect.arrayContaining(Object.keys(probeRoutes)));
    expect(Object.keys(probeRoutes)).toHaveLength(6);
  });

  it("gives every route x caller its documented status", async () => {
    // The test app has the foundation, the routers app.ts mounts itself, and the probe router.
    const documented = await documentedRoutes(app);
    const table: Record<string, Access> = {};
    for (const route of documented) {
      const access = probeRoutes[route] ?? ROUTES[route];
      if (access) table[route] = access;
    }
    expect(Object.keys(table).length).toBeGreaterThan(Object.keys(probeRoutes).length);
    const { failures } = await runMatrix(app, table);
    expect(failures).toEqual([]);
  }, MATRIX_TIMEOUT);
});
