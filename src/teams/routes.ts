import { createRoute, z } from "@hono/zod-openapi";
import { requireUserKey, userIdOf, userScope as scoped } from "../http/auth";
import { createRouter, commonErrors, conflictError, jsonBody, jsonResponse, notFoundError, security } from "../http/openapi";
import * as schemas from "./schemas";
import * as service from "./service";

const tags = ["Teams"];

export const teamRoutes = createRouter()
  .openapi(
    createRoute({
      method: "post",
      path: "/team",
      tags,
      security,
      summary: "Create a team (the caller becomes OWNER)",
      middleware: [requireUserKey] as const,
      request: { body: jsonBody(schemas.TeamInput) },
      responses: { 201: jsonResponse(schemas.TeamSummary, "The new team"), ...commonErrors },
    }),
    async (c) => {
      const team = await service.createTeam(c.var.db, userIdOf(c), c.req.valid("json"));
      return c.json(team, 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/team",
      tags,
      security,
      summary: "List the teams where the caller is OWNER or ADMIN",
      middleware: [requireUserKey] as const,
      responses: { 200: jsonResponse(z.array(schemas.TeamSummary), "Teams, oldest first"), ...commonErrors },
    }),
    async (c) => c.json(await service.listManagedTeams(c.var.db, userIdOf(c)), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/team/{teamId}",
      tags,
      security,
      summary: "Team details with its members",
      request: { params: schemas.TeamIdParam },
      responses: { 200: jsonResponse(schemas.TeamDetail, "The team"), ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      const { teamId, role } = scoped(c);
      return c.json(await service.getTeamDetail(c.var.db, teamId, role), 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/team/{teamId}",
      tags,
      security,
      summary: "Rename a team or replace its metadata",
      request: { params: schemas.TeamIdParam, body: jsonBody(schemas.TeamUpdate) },
      responses: { 200: jsonResponse(schemas.TeamSummary, "The updated team"), ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      const { teamId, role } = scoped(c);
      return c.json(await service.updateTeam(c.var.db, teamId, role, c.req.valid("json")), 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/team/{teamId}/members",
      tags,
      security,
      summary: "List the members of a team",
      request: { params: schemas.TeamIdParam },
      responses: {
        200: jsonResponse(z.object({ members: z.array(schemas.Member) }), "Members and their roles"),
        ...commonErrors,
      },
    }),
    async (c) => {
      const { teamId, role } = scoped(c);
      const { members } = await service.getTeamDetail(c.var.db, teamId, role);
      return c.json({ members }, 200);
    },
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/team/{teamId}/members/{userId}",
      tags,
      security,
      summary: "Change a member's role",
      request: { params: schemas.MemberParams, body: jsonBody(schemas.MemberUpdate) },
      responses: {
        200: jsonResponse(z.object({ userId: z.string(), role: schemas.Role }), "The new role"),
        ...commonErrors,
        ...notFoundError,
        ...conflictError,
      },
    }),
    async (c) => {
      const { teamId, role } = scoped(c);
      const { userId } = c.req.valid("param");
      return c.json(await service.changeMemberRole(c.var.db, teamId, role, userId, c.req.valid("json").role), 200);
    },
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/team/{teamId}/members/{userId}",
      tags,
      security,
      summary: "Remove a member from the team",
      request: { params: schemas.MemberParams },
      responses: { 204: { description: "Removed" }, ...commonErrors, ...notFoundError, ...conflictError },
    }),
    async (c) => {
      const { teamId, role } = scoped(c);
      await service.removeMember(c.var.db, teamId, role, c.req.valid("param").userId);
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/team/{teamId}/invitations",
      tags,
      security,
      summary: "Invite someone by email with a role; returns the invitation token once",
      request: { params: schemas.TeamIdParam, body: jsonBody(schemas.InvitationInput) },
      responses: { 201: jsonResponse(schemas.CreatedInvitation, "The invitation"), ...commonErrors, ...conflictError },
    }),
    async (c) => {
      const { teamId, role, userId } = scoped(c);
      return c.json(await service.inviteMember(c.var.db, teamId, { userId, role }, c.req.valid("json")), 201);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/team/{teamId}/invitations",
      tags,
      security,
      summary: "List pending invitations",
      request: { params: schemas.TeamIdParam },
      responses: {
        200: jsonResponse(z.object({ invitations: z.array(schemas.Invitation) }), "Pending invitations"),
        ...commonErrors,
      },
    }),
    async (c) => c.json({ invitations: await service.listInvitations(c.var.db, scoped(c).teamId) }, 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/team/{teamId}/invitations/{invitationId}",
      tags,
      security,
      summary: "Withdraw a pending invitation",
      request: {
        params: schemas.TeamIdParam.extend({
          invitationId: z.string().openapi({ param: { name: "invitationId", in: "path" } }),
        }),
      },
      responses: { 204: { description: "Withdrawn" }, ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      await service.revokeInvitation(c.var.db, scoped(c).teamId, c.req.valid("param").invitationId);
      return c.body(null, 204);
    },
  );

/** Served without an API key: the invitation token is the credential. */
export const invitationRoutes = createRouter().openapi(
  createRoute({
    method: "post",
    path: "/invitations/accept",
    tags,
    summary: "Accept an invitation (no API key: the token is the credential)",
    request: { body: jsonBody(schemas.AcceptInvitationInput) },
    responses: {
      200: jsonResponse(schemas.AcceptedInvitation, "The membership; a new user also gets a user key, once"),
      400: commonErrors[400],
    },
  }),
  async (c) => c.json(await service.acceptInvitation(c.var.db, c.req.valid("json")), 200),
);
