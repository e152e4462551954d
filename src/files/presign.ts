import { AwsClient } from "aws4fetch";
import { ApiError } from "../http/errors";

/** Lifetime of every presigned URL (upload and download). */
export const PRESIGNED_URL_TTL_SECONDS = 15 * 60;

/** Where presigned URLs point, and the S3 credentials that sign them. */
export type S3Target = { endpoint: string; bucket: string; accessKeyId: string; secretAccessKey: string };

/**
 * Production: R2's S3 API for the account (R2_ACCOUNT_ID var, R2_ACCESS_KEY_ID and
 * R2_SECRET_ACCESS_KEY secrets). Development (no account id): wrangler's local S3 endpoint for R2,
 * served by `wrangler dev` on the same origin as the API, with the bucket's local_dev credentials.
 */
export function s3Target(env: Env, requestUrl: string): S3Target {
  const { R2_ACCOUNT_ID: account, R2_ACCESS_KEY_ID: accessKeyId, R2_SECRET_ACCESS_KEY: secretAccessKey } = env;
  const production = env.ENVIRONMENT === "production";
  if (!accessKeyId || !secretAccessKey || (production && !account)) {
    console.error(JSON.stringify({ error: "R2 S3 credentials or account id missing" }));
    throw new ApiError(503, "File uploads are not configured on this deployment (R2 S3 credentials missing).");
  }
  const endpoint = account
    ? `https://${account}.r2.cloudflarestorage.com`
    : `${new URL(requestUrl).origin}/cdn-cgi/local/r2/s3`;
  return { endpoint, bucket: env.R2_BUCKET_NAME, accessKeyId, secretAccessKey };
}

/** An object key as a URL path, encoded the way S3 SigV4 canonicalises it. */
export function encodeKeyPath(key: string): string {
  return key
    .split("/")
    .map((s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase()))
    .join("/");
}

/**
 * A presigned S3 URL (SigV4 in the query string, aws4fetch) for one method on one key. Only the
 * host is a signed header, so any client (curl, a browser's fetch) can use it as it is.
 */
export async function presign(
  target: S3Target,
  method: "PUT" | "GET",
  key: string,
  now = new Date(),
): Promise<{ url: string; expiresAt: string }> {
  const client = new AwsClient({
    accessKeyId: target.accessKeyId,
    secretAccessKey: target.secretAccessKey,
    service: "s3",
    region: "auto",
  });
  const url = new URL(`${target.endpoint}/${target.bucket}/${encodeKeyPath(key)}`);
  url.searchParams.set("X-Amz-Expires", String(PRESIGNED_URL_TTL_SECONDS));
  const datetime = now.toISOString().replace(/[:-]|\.\d{3}/g, "");
  const signed = await client.sign(url.toString(), { method, aws: { signQuery: true, datetime } });
  // Second precision, as the signature's X-Amz-Date.
  const expires = new Date(Math.floor(now.getTime() / 1000) * 1000 + PRESIGNED_URL_TTL_SECONDS * 1000);
  return { url: signed.url, expiresAt: expires.toISOString() };
}
