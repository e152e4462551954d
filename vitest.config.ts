import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Node's fs, typed locally: the project's tsconfig has no Node types (it type-checks workerd code).
type NodeFs = {
  readdirSync(dir: string): string[];
  readFileSync(path: string): { toString(encoding: "base64"): string };
};

/**
 * Knowledge file fixtures (test/fixtures/knowledge), base64 by file name: vite cannot import
 * binary .doc/.docx as bytes, a binding can carry them (TEST_FIXTURES, test/knowledge/env.d.ts).
 */
async function readKnowledgeFixtures(): Promise<Record<string, string>> {
  const fs = (await import("node:fs" as string)) as NodeFs;
  const dir = "./test/fixtures/knowledge";
  return Object.fromEntries(
    fs
      .readdirSync(dir)
      .filter((f) => /\.(txt|csv|pdf|docx?)$/.test(f))
      .map((f) => [f, fs.readFileSync(`${dir}/${f}`).toString("base64")]),
  );
}

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  const knowledgeFixtures = await readKnowledgeFixtures();
  return {
    plugins: [
      cloudflareTest(async ({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            TEST_FIXTURES: knowledgeFixtures,
            // test/global/fake-openai.ts: a fake OpenAI-compatible endpoint for "openai:fake-*" models.
            OPENAI_BASE_URL: inject("fakeOpenAiBaseUrl"),
            OPENAI_API_KEY: "test-openai-key",
            MODEL_TIMEOUT_MS: "3000",
          },
          // Outbound fetches pass through test/webhooks/receiver-worker.mjs: it answers
          // *.webhook.test (webhook receivers, a DNS-over-HTTPS stub) and forwards every other host.
          outboundService: "webhook-receiver",
          workers: [
            {
              name: "webhook-receiver",
              modules: true,
              scriptPath: "./test/webhooks/receiver-worker.mjs",
              compatibilityDate: "2026-10-01",
              durableObjects: { RECEIVER: "Receiver" },
            },
          ],
        },
      })),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/setup.ts"],
      globalSetup: ["./test/global/fake-openai.ts"],
    },
  };
});
