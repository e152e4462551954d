declare global {
  namespace Cloudflare {
    interface Env {
      /** test/fixtures/knowledge files as base64, by file name (vitest.config.ts). */
      TEST_FIXTURES: Record<string, string>;
    }
  }
}
export {};
