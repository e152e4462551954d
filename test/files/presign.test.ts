import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { encodeKeyPath, presign, PRESIGNED_URL_TTL_SECONDS, s3Target } from "../../src/files/presign";
import { ApiError } from "../../src/http/errors";
import { toHex } from "../../src/lib/crypto";

const enc = new TextEncoder();

async function hmac(key: Uint8Array | string, msg: string): Promise<Uint8Array> {
  const raw = typeof key === "string" ? enc.encode(key) : key;
  const k = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(msg)));
}

const sha256 = async (s: string) => toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(s))));
const rfc3986 = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());

/** SigV4 query signing written out from the AWS specification, independent of aws4fetch. */
async function expectedSignature(url: URL, method: string, secret: string): Promise<string> {
  const params = [...url.searchParams].filter(([k]) => k !== "X-Amz-Signature");
  const query = params
    .map(([k, v]) => [rfc3986(k), rfc3986(v)])
    .sort(([a], [b]) => (a! < b! ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonical = [method, url.pathname, query, `host:${url.host}\n`, "host", "UNSIGNED-PAYLOAD"].join("\n");
  const date = url.searchParams.get("X-Amz-Date")!;
  const scope = `${date.slice(0, 8)}/auto/s3/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", date, scope, await sha256(canonical)].join("\n");
  let key = await hmac("AWS4" + secret, date.slice(0, 8));
  for (const part of ["auto", "s3", "aws4_request"]) key = await hmac(key, part);
  return toHex(await hmac(key, toSign));
}

describe("presigned URLs", () => {
  const local = s3Target(env, "http://localhost:8787/upload-url");

  it("points at wrangler's local S3 endpoint for R2 when no account is configured", () => {
    expect(local).toEqual({
      endpoint: "http://localhost:8787/cdn-cgi/local/r2/s3",
      bucket: "agent-platform-files",
      accessKeyId: "local-dev-access-key",
      secretAccessKey: "local-dev-secret-access-key",
    });
  });

  it("points at the account's R2 S3 API in production", () => {
    const prod = { ...env, ENVIRONMENT: "production", R2_ACCOUNT_ID: "abc123", R2_ACCESS_KEY_ID: "AK", R2_SECRET_ACCESS_KEY: "SK" };
    expect(s3Target(prod, "https://api.example.com/upload-url").endpoint).toBe("https://abc123.r2.cloudflarestorage.com");
  });

  it("refuses to sign in production without credentials or account id", () => {
    const missing = [
      { ...env, ENVIRONMENT: "production", R2_ACCOUNT_ID: "" },
      { ...env, ENVIRONMENT: "production", R2_ACCOUNT_ID: "abc", R2_ACCESS_KEY_ID: undefined },
    ];
    for (const e of missing) {
      try {
        s3Target(e, "https://api.example.com/upload-url");
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(ApiError);
        expect((err as ApiError).status).toBe(503);
      }
    }
  });

  it("signs a PUT in the query string: SigV4, host only, 15 minutes", async () => {
    const now = new Date("2026-03-04T05:06:07.890Z");
    const { url, expiresAt } = await presign(local, "PUT", "uploads/team_1/Price list (v2) ü.csv", now);
    const u = new URL(url);
    expect(u.origin + u.pathname).toBe(
      "http://localhost:8787/cdn-cgi/local/r2/s3/agent-platform-files/uploads/team_1/Price%20list%20%28v2%29%20%C3%BC.csv",
    );
    expect(Object.fromEntries(u.searchParams)).toMatchObject({
      "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
      "X-Amz-Credential": "local-dev-access-key/20260304/auto/s3/aws4_request",
      "X-Amz-Date": "20260304T050607Z",
      "X-Amz-Expires": String(PRESIGNED_URL_TTL_SECONDS),
      "X-Amz-SignedHeaders": "host",
    });
    expect(PRESIGNED_URL_TTL_SECONDS).toBe(900);
    expect(expiresAt).toBe("2026-03-04T05:21:07.000Z");
    expect(u.searchParams.get("X-Amz-Signature")).toBe(await expectedSignature(u, "PUT", "local-dev-secret-access-key"));
  });

  it("binds the signature to the method, the key and the secret", async () => {
    const now = new Date("2026-03-04T05:06:07Z");
    const put = new URL((await presign(local, "PUT", "uploads/t/a.txt", now)).url);
    const get = new URL((await presign(local, "GET", "uploads/t/a.txt", now)).url);
    const other = new URL((await presign(local, "PUT", "uploads/t/b.txt", now)).url);
    const wrong = new URL((await presign({ ...local, secretAccessKey: "x" }, "PUT", "uploads/t/a.txt", now)).url);
    const sigs = [put, get, other, wrong].map((u) => u.searchParams.get("X-Amz-Signature"));
    expect(new Set(sigs).size).toBe(4);
    expect(get.searchParams.get("X-Amz-Signature")).toBe(await expectedSignature(get, "GET", "local-dev-secret-access-key"));
  });

  it("encodes keys the way SigV4 canonicalises paths", () => {
    expect(encodeKeyPath("a b/c(1)!*'.txt")).toBe("a%20b/c%281%29%21%2A%27.txt");
  });
});
