import { z } from "@hono/zod-openapi";
import { ROLES } from "../db/schema";
import { clientKeyed } from "../http/validation";

export const TeamMetadata = clientKeyed(
  z
    .record(z.string().max(100), z.string().max(1000))
    .refine((m) => Object.keys(m).length <= 50, "at most 50 entries"),
).openapi({ example: { plan: "pro" } });

export const TeamInput = z
  .object({
    name: z.string().trim().min(1).max(200).openapi({ example: "Acme Support" }),
    metadata: TeamMetadata.optional(),
  })
  .strict()
  .openapi("TeamInput");

export const TeamUpdate = TeamInput.partial().strict().openapi("TeamUpdate");

export const Role = z.enum(ROLES);

export const Team = z
  .object({
    id: z.string(),
    name: z.string(),
    metadata: z.record(z.string(), z.string()),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("Team");

export const TeamSummary = Team.extend({ role: Role }).openapi("TeamSummary");

export const Member = z
  .object({ userId: z.string(), email: z.string(), name: z.string().nullable(), role: Role, joinedAt: z.string() })
  .openapi("Member");

export const TeamDetail = Team.extend({ role: Role, members: z.array(Member) }).openapi("TeamDetail");

export const TeamIdParam = z.object({ teamId: z.string().openapi({ param: { name: "teamId", in: "path" } }) });

export const InvitationInput = z
  .object({ email: z.email().max(320), role: Role.default("MEMBER") })
  .strict()
  .openapi("InvitationInput");

export const Invitation = z
  .object({ id: z.string(), email: z.string(), role: Role, expiresAt: z.string(), createdAt: z.string() })
  .openapi("Invitation");

export const CreatedInvitation = Invitation.extend({
  token: z.string().openapi({ description: "Shown once. Send it to the invitee; it is their proof of invitation." }),
}).openapi("CreatedInvitation");

export const AcceptInvitationInput = z
  .object({ token: z.string().min(10).max(200), name: z.string().trim().max(200).optional() })
  .strict()
  .openapi("AcceptInvitationInput");

export const AcceptedInvitation = z
  .object({
    teamId: z.string(),
    userId: z.string(),
    role: Role,
    userKey: z
      .string()
      .optional()
      .openapi({ description: "Only for a new user: their user secret key (usk_live_), shown once." }),
  })
  .openapi("AcceptedInvitation");

export const MemberUpdate = z.object({ role: Role }).strict().openapi("MemberUpdate");
export const MemberParams = TeamIdParam.extend({
  userId: z.string().openapi({ param: { name: "userId", in: "path" } }),
});
