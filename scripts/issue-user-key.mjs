// `npm run issue-user-key -- --email you@example.com [--team "Acme"] [--name "You"] [--local|--remote] [--env production]`
//
// The first user key of a deployment, when no key exists yet to call the API with. Writes a user
// (or reuses the one with this email), optionally a team it OWNs, and a user key (hash only) to
// D1 through `wrangler d1 execute`, then prints the key once. Remote when --remote, or when --env is
// given without --local; otherwise the local D1 of `npm run dev`.
import { parseArgs } from "node:util";
import { issueUser, sqlLiteral, toSqlFile } from "./lib/issue-keys.mjs";
import { d1ExecuteFile, d1Query } from "./lib/wrangler.mjs";

const usage = `Usage: npm run issue-user-key -- --email you@example.com [--team "Acme"] [--name "Your Name"]
                                [--local | --remote] [--env production] [--persist-to DIR] [--json]`;

let values;
try {
  ({ values } = parseArgs({
    options: {
      email: { type: "string" },
      team: { type: "string" },
      name: { type: "string" },
      local: { type: "boolean", default: false },
      remote: { type: "boolean", default: false },
      env: { type: "string" },
      "persist-to": { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  }));
} catch (err) {
  console.error(`${err.message}\n${usage}`);
  process.exit(2);
}
if (values.help || !values.email) {
  console.error(usage);
  process.exit(values.help ? 0 : 2);
}
if (values.local && values.remote) {
  console.error("Choose one of --local and --remote.");
  process.exit(2);
}

const remote = values.remote || (values.env !== undefined && !values.local);
const target = { remote, env: values.env, persistTo: values["persist-to"] };
const where = remote ? `the remote D1${values.env ? ` (--env ${values.env})` : ""}` : "the local D1";

try {
  const email = values.email.trim().toLowerCase();
  // A user who exists keeps their id (and other keys); they just get one more user key.
  const [found] = await d1Query(`SELECT id FROM users WHERE email = ${sqlLiteral(email)}`, target);
  const existingId = found?.[0]?.id;
  const issued = await issueUser({
    email,
    userName: values.name ?? null,
    userId: existingId,
    teamName: values.team,
    teamKeys: false,
    keyName: "Issued by issue-user-key",
  });
  await d1ExecuteFile(toSqlFile(issued.statements), target);

  if (values.json) {
    console.log(JSON.stringify({ userId: issued.userId, teamId: issued.teamId, userKey: issued.userKey }));
  } else {
    console.log(`
Wrote to ${where}:
  user    ${issued.userId} <${email}>${existingId ? " (existing user)" : ""}
  team    ${issued.teamId ? `${issued.teamId} "${values.team}", you are OWNER` : "(none: create one with POST /team)"}

User secret key (shown once, only its SHA-256 is stored; keep it on servers):
  ${issued.userKey}

Next: curl -H "x-api-key: <key>" <your worker URL>/team
`);
  }
} catch (err) {
  console.error(`Could not issue the key on ${where}:\n${err.message}`);
  process.exit(1);
}
