import { createRoute } from "@hono/zod-openapi";
import { teamIdOf } from "../http/auth";
import { createRouter, commonErrors, ErrorSchema, jsonBody, jsonResponse, notFoundError, security } from "../http/openapi";
import * as schemas from "./schemas";
import * as service from "./service";

const tags = ["Files"];
const tooLarge = { 413: { description: "The uploaded file is larger than the limit", content: { "application/json": { schema: ErrorSchema } } } };

/**
 * Knowledge files. Team-scoped (app.ts teamScopedRouters): bare paths for team keys,
 * /team/{teamId}/... for user keys. Upload flow: POST /upload-url -> PUT the bytes to uploadUrl ->
 * POST /confirm-upload -> ingestion in the background (status on GET /file).
 */
export const fileRoutes = createRouter()
  .openapi(
    createRoute({
      method: "post",
      path: "/upload-url",
      tags,
      security,
      summary: "Get a presigned URL to upload a knowledge file (.txt, .doc, .docx, .pdf, .csv)",
      request: { body: jsonBody(schemas.UploadUrlInput) },
      responses: { 200: jsonResponse(schemas.UploadTicket, "PUT the file's bytes to uploadUrl before expiresAt"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json(await service.createUploadUrl(c.env, c.var.db, teamIdOf(c), c.req.valid("json"), c.req.url), 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/confirm-upload",
      tags,
      security,
      summary: "Record an uploaded file and start its ingestion",
      request: { body: jsonBody(schemas.ConfirmUploadInput) },
      responses: {
        201: jsonResponse(schemas.FileRecord, "The new file (status processing)"),
        200: jsonResponse(schemas.FileRecord, "The file already existed: unchanged (repeated confirm) or replaced by the new upload"),
        ...commonErrors,
        ...notFoundError,
        ...tooLarge,
      },
    }),
    async (c) => {
      const { file, created } = await service.confirmUpload(c.env, c.var.db, teamIdOf(c), c.req.valid("json"));
      return created ? c.json(file, 201) : c.json(file, 200);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/file",
      tags,
      security,
      summary: "List the team's knowledge files with their ingestion status",
      request: { query: schemas.FileListQuery },
      responses: { 200: jsonResponse(schemas.FileList, "Files, oldest first"), ...commonErrors },
    }),
    async (c) => c.json({ files: await service.listFiles(c.var.db, teamIdOf(c), c.req.valid("query").agentId) }, 200),
  )
  .openapi(
    createRoute({
      method: "put",
      path: "/file",
      tags,
      security,
      summary: "Update a file's agent association and token counts",
      request: { query: schemas.FilenameQuery, body: jsonBody(schemas.FileUpdate) },
      responses: { 200: jsonResponse(schemas.FileRecord, "The updated file"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json(await service.updateFile(c.var.db, teamIdOf(c), c.req.valid("query").filename, c.req.valid("json")), 200),
  )
  .openapi(
    createRoute({
      method: "delete",
      path: "/file",
      tags,
      security,
      summary: "Delete a file: its stored bytes, its record and its indexed text",
      request: { query: schemas.FileSelectorQuery },
      responses: { 204: { description: "Deleted" }, ...commonErrors, ...notFoundError },
    }),
    async (c) => {
      await service.deleteFile(c.env, c.var.db, teamIdOf(c), c.req.valid("query"));
      return c.body(null, 204);
    },
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/file/presigned-url",
      tags,
      security,
      summary: "Get a presigned URL that downloads a file's original bytes",
      request: { query: schemas.DownloadQuery },
      responses: { 200: jsonResponse(schemas.DownloadTicket, "GET url before expiresAt"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json(await service.createDownloadUrl(c.env, c.var.db, teamIdOf(c), c.req.valid("query"), c.req.url), 200),
  )
  .openapi(
    createRoute({
      method: "get",
      path: "/file/search",
      tags,
      security,
      summary: "Search the indexed text of the team's files, as AgentKnowledgeTool does",
      request: { query: schemas.SearchQuery },
      responses: { 200: jsonResponse(schemas.SearchResult, "Best passages first"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json({ passages: await service.searchFiles(c.env, c.var.db, teamIdOf(c), c.req.valid("query")) }, 200),
  )
  .openapi(
    createRoute({
      method: "post",
      path: "/file/reindex",
      tags,
      security,
      summary: "Run a file's ingestion again (e.g. after it failed)",
      request: { query: schemas.FileSelectorQuery },
      responses: { 202: jsonResponse(schemas.FileRecord, "Ingestion queued (status processing)"), ...commonErrors, ...notFoundError },
    }),
    async (c) => c.json(await service.reindexFile(c.env, c.var.db, teamIdOf(c), c.req.valid("query")), 202),
  );
