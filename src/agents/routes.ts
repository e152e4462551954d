import { createRoute } from "@hono/zod-openapi";
import type { Context } from "hono";
import { teamIdOf } from "../http/auth";
import type { AppEnv } from "../http/context";
import { createRouter, commonErrors, conflictError, jsonBody, jsonResponse, notFoundError, security } from "../http/openapi";
import type { EventSink } from "../events/emit";
import * as schemas from "./schemas";
import * as service from "./service";

const tags = ["Agents"];

const sinkOf = (c: Context<AppEnv>): EventSink => ({
  env: c.env,
  db: c.var.db,
  waitUntil: (p) => c.executionCtx.waitUntil(p),
});

const listRoute = (path: string, summary: string) =>
  createRoute({
    method: "get",
    path,
    tags,
    security,
    summary,
    request: { query: schemas.ListQuery },
    responses: { 200: jsonResponse(schemas.AgentList, "The team's agents, oldest first"), ...commonErrors },
  });

/**
 * Team-scoped (app.ts teamScopedRouters): /agent... for team keys, /team/{teamId}/agent... for
 * user keys. /agents is the listing alias SPEC.md shows for user keys (GET /team/{teamId}/agents).
 */
export const agentRoutes = createRouter()
  .openapi(
    createRoute({
      method: "post",
      path: "/agent",
      tags,
      security,
      summary: "Create an agent (version 1)",
      request: { body: jsonBody(schemas.AgentInput) },
      responses: { 200: jsonResponse(schemas.CreatedAgent, "The new agent"), ...commonErrors },
    }),
    async (c) => c.json(await service.createAgent(sinkOf(c), teamIdOf(c), c.req.valid("json")), 200),
  )
  .openapi(listRoute("/agent", "List the team's agents"), async (c) =>
    c.json(await service.listAgents(c.var.db, teamIdOf(c), c.req.valid("query").type), 200),
  )
  .openapi(listRoute("/agents", "List the team's agents (alias of GET /agent)"), async (c) =>
    c.json(await service.listAgents(c.var.db, teamIdOf(c), c.req.valid("query").type), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/agent/{id}",
      tags,
      security,
      summary: "An agent's configuration in force, with its rendered prompts",
      request: { params: schemas.AgentIdParam },
      responses: { 200: jsonResponse(schemas.AgentDetail, "The agent"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json(await service.getAgent(c.var.db, teamIdOf(c), c.req.valid("param").id), 200),
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/agent/{id}",
      tags,
      security,
      summary: "Change an agent (partial: fields present replace the current ones); writes a new version",
      request: { params: schemas.AgentIdParam, body: jsonBody(schemas.AgentUpdate) },
      responses: {
        200: jsonResponse(schemas.UpdatedAgent, "The agent with its new version"),
        ...commonErrors,
        ...notFoundError,
        ...conflictError,
      },
    }),
    async (c) =>
      c.json(await service.updateAgent(sinkOf(c), teamIdOf(c), c.req.valid("param").id, c.req.valid("json")), 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/agent/{id}",
      tags,
      security,
      summary: "Delete an agent and its version history",
      request: { params: schemas.AgentIdParam },
      responses: { 204: { description: "Deleted" }, ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      await service.deleteAgent(c.var.db, teamIdOf(c), c.req.valid("param").id);
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/agent/{id}/rollback",
      tags,
      security,
      summary: "Make the previous version (in force - 1) current again",
      request: { params: schemas.AgentIdParam },
      responses: {
        200: jsonResponse(schemas.RolledBackAgent, "The version now in force"),
        ...commonErrors,
        ...notFoundError,
        409: { description: "The version in force is version 1: nothing earlier to roll back to", content: conflictError[409].content },
      },
    }),
    async (c) => c.json(await service.rollbackAgent(sinkOf(c), teamIdOf(c), c.req.valid("param").id), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/agent/{id}/versions",
      tags,
      security,
      summary: "An agent's configuration history, oldest first",
      request: { params: schemas.AgentIdParam },
      responses: { 200: jsonResponse(schemas.VersionList, "The versions"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json(await service.listVersions(c.var.db, teamIdOf(c), c.req.valid("param").id), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/agent/{id}/versions/{n}",
      tags,
      security,
      summary: "One configuration version",
      request: { params: schemas.VersionParams },
      responses: { 200: jsonResponse(schemas.VersionDetail, "The version"), ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      const { id, n } = c.req.valid("param");
      return c.json(await service.getVersion(c.var.db, teamIdOf(c), id, n), 200);
    },
  );
