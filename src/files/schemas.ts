import { z } from "@hono/zod-openapi";
import { ACCEPTED_EXTENSIONS } from "../knowledge/file-types";
import { FILE_STATUSES } from "../db/schema";

// A file name, not a path: it names the file within its team and is part of its storage key.
export const Filename = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .refine((s) => !/[\/\\\u0000-\u001f\u007f]/.test(s), "must be a file name without /, \\ or control characters")
  .refine((s) => s !== "." && s !== "..", "must be a file name")
  .openapi({ example: "employee-handbook.pdf", description: `One of ${ACCEPTED_EXTENSIONS.join(", ")}` });

const AgentId = z.string().min(1).max(100).openapi({ example: "agt_4Jx9fK2mQ7rTz1wLp0aB" });
const Tokens = z.number().int().min(0).max(1_000_000_000);

export const UploadUrlInput = z
  .object({ filename: Filename, agentId: AgentId.optional() })
  .strict()
  .openapi("UploadUrlInput");

export const UploadTicket = z
  .object({
    uploadUrl: z.string().openapi({ description: "Presigned S3 PUT URL: send the file's bytes as the request body" }),
    fileKey: z.string().openapi({ description: "Storage key the upload goes to" }),
    expiresAt: z.string().openapi({ example: "2026-01-01T12:15:00.000Z" }),
    maxBytes: z.number().int().openapi({ description: "Largest accepted file, checked at confirm-upload" }),
  })
  .openapi("UploadTicket");

export const ConfirmUploadInput = z
  .object({
    filename: Filename,
    agentId: AgentId.optional(),
    inputTokens: Tokens.optional().openapi({ description: "Token count metadata (default 0)" }),
    outputTokens: Tokens.optional().openapi({ description: "Token count metadata (default 0)" }),
  })
  .strict()
  .openapi("ConfirmUploadInput");

export const FileRecord = z
  .object({
    id: z.string(),
    filename: z.string(),
    agentId: z.string().nullable(),
    inputTokens: z.number().int(),
    outputTokens: z.number().int(),
    size: z.number().int().openapi({ description: "Bytes" }),
    contentType: z.string(),
    status: z.enum(FILE_STATUSES).openapi({ description: "Ingestion: processing, then ready (searchable) or failed" }),
    reason: z.string().nullable().openapi({ description: "Why ingestion failed (status failed), else null" }),
    chunkCount: z.number().int().openapi({ description: "Indexed passages (status ready)" }),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi("File");

export const FileList = z.object({ files: z.array(FileRecord) }).openapi("FileList");

export const FileListQuery = z.object({
  agentId: z.string().optional().openapi({ param: { name: "agentId", in: "query" }, description: "Only this agent's files" }),
});

/** ?filename= names a file (GET /file/presigned-url also takes ?name=, DELETE and reindex also ?id=). */
export const FilenameQuery = z.object({
  filename: Filename.openapi({ param: { name: "filename", in: "query" } }),
});

export const DownloadQuery = z.object({
  filename: Filename.optional().openapi({ param: { name: "filename", in: "query" } }),
  name: Filename.optional().openapi({ param: { name: "name", in: "query" }, description: "Same as filename" }),
  agentId: z
    .string()
    .optional()
    .openapi({ param: { name: "agentId", in: "query" }, description: "If given, the file must be associated with this agent" }),
});

export const FileSelectorQuery = z.object({
  filename: Filename.optional().openapi({ param: { name: "filename", in: "query" } }),
  id: z.string().optional().openapi({ param: { name: "id", in: "query" } }),
});

export const FileUpdate = z
  .object({
    agentId: AgentId.nullable().optional().openapi({ description: "An agent of the team, or null for no agent" }),
    inputTokens: Tokens.optional(),
    outputTokens: Tokens.optional(),
  })
  .strict()
  .refine((b) => Object.keys(b).length > 0, "give at least one of agentId, inputTokens, outputTokens")
  .openapi("FileUpdate");

export const DownloadTicket = z
  .object({
    url: z.string().openapi({ description: "Presigned S3 GET URL of the original bytes" }),
    expiresAt: z.string(),
  })
  .openapi("DownloadTicket");

export const SearchQuery = z.object({
  query: z.string().trim().min(1).max(500).openapi({ param: { name: "query", in: "query" }, example: "refund period" }),
  agentId: z
    .string()
    .optional()
    .openapi({ param: { name: "agentId", in: "query" }, description: "Search what this agent sees (its files and the team-wide ones); default: all the team's files" }),
  limit: z.coerce.number().int().min(1).max(20).optional().openapi({ param: { name: "limit", in: "query" }, type: "integer" }),
});

export const SearchResult = z
  .object({
    passages: z.array(
      z.object({ fileId: z.string(), filename: z.string(), text: z.string(), score: z.number() }).openapi("KnowledgePassage"),
    ),
  })
  .openapi("KnowledgeSearchResult");
