import type { Database } from "../db/client";
import type { Role } from "../db/schema";
import type { Principal } from "../keys/lookup";

/** What every handler can read from the Hono context. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    db: Database;
    /** Set by the auth middleware on every route that needs a key. */
    principal: Principal;
    /** Set on /team/:teamId/... for user keys, after the role check. */
    scopedTeam?: { teamId: string; role: Role };
  };
};
