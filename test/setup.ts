import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// The real migrations of migrations/, applied once per test file's storage.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
