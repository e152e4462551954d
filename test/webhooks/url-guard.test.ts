import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { literalUrlProblem, urlPolicy, urlProblem, type UrlPolicy } from "../../src/webhooks/url-guard";
import { BASE, createWorld, json } from "../helpers/world";
import { receiverHost, receiverLog } from "./helpers";
import { EVENTS_QUEUE, attemptsOf, deliveriesOf, runQueue, storeEvent } from "./queue";

/** The production configuration of wrangler.toml [env.production.vars], with the test DNS stub. */
const productionEnv: Env = {
  ...env,
  ENVIRONMENT: "production",
  WEBHOOK_ALLOW_PRIVATE_TARGETS: "false",
  WEBHOOK_DNS_RESOLVER: "https://dns.webhook.test/dns-query",
  WEBHOOK_SECRET_KEY: "a-production-secret-key-for-the-tests",
};

async function callAs(workerEnv: Env, method: string, path: string, key: string, body?: unknown) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(BASE + path, {
      method,
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    workerEnv,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return res;
}

const production: UrlPolicy = { allowPrivate: false, resolver: "" };
const development: UrlPolicy = { allowPrivate: true, resolver: "" };

describe("webhook URL rules", () => {
  it("refuses loopback, private, link-local, unique-local and local names in production", () => {
    const refused = [
      "http://example.com/hook",
      "https://127.0.0.1/",
      "https://127.1.2.3:8443/",
      "https://2130706433/", // 127.0.0.1 as one number
      "https://0x7f.0.0.1/",
      "https://0.0.0.0/",
      "https://10.0.0.8/",
      "https://172.16.4.4/",
      "https://172.31.255.255/",
      "https://192.168.1.1/",
      "https://100.64.0.1/",
      "https://169.254.169.254/latest/meta-data",
      "https://224.0.0.1/",
      "https://[::1]/",
      "https://[::]/",
      "https://[fd12:3456::1]/",
      "https://[fc00::1]/",
      "https://[fe80::1]/",
      "https://[::ffff:127.0.0.1]/",
      "https://[::ffff:10.0.0.1]/",
      "https://[64:ff9b::a00:1]/",
      "https://[2002:c0a8:101::1]/", // 6to4 of 192.168.1.1
      "https://localhost/",
      "https://LOCALHOST./",
      "https://api.localhost/",
      "https://printer.local/",
      "https://metadata.google.internal/",
      "https://nas.home.arpa/",
      "https://intranet/",
      "https://user:secret@example.com/",
      "ftp://example.com/",
      "/relative",
      "https://" + "a".repeat(2050) + ".com/",
    ];
    for (const url of refused) expect(literalUrlProblem(url, production), url).not.toBeNull();

    const allowed = [
      "https://example.com/hook",
      "https://hooks.example.com:8443/a?b=c",
      "https://93.184.215.14/",
      "https://172.32.0.1/",
      "https://[2606:4700:4700::1111]/",
      "https://[::ffff:93.184.215.14]/",
    ];
    for (const url of allowed) expect(literalUrlProblem(url, production), url).toBeNull();
  });

  it("allows http and local targets only in development, and never when ENVIRONMENT is production", () => {
    expect(literalUrlProblem("http://localhost:4000/hook", development)).toBeNull();
    expect(literalUrlProblem("http://127.0.0.1:4000/hook", development)).toBeNull();
    expect(literalUrlProblem("ftp://localhost/", development)).not.toBeNull();
    expect(urlPolicy(env).allowPrivate).toBe(true);
    expect(urlPolicy({ ...env, ENVIRONMENT: "production", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" }).allowPrivate).toBe(false);
    expect(urlPolicy(productionEnv)).toEqual({ allowPrivate: false, resolver: "https://dns.webhook.test/dns-query" });
  });

  it("refuses host names that resolve to non-public addresses (DNS-over-HTTPS)", async () => {
    const policy = urlPolicy(productionEnv);
    expect(await urlProblem("https://rebind.webhook.test/", policy)).toContain("127.0.0.1");
    expect(await urlProblem("https://private.webhook.test/", policy)).toContain("10.1.2.3");
    expect(await urlProblem("https://v6local.webhook.test/", policy)).toContain("fd00::1");
    expect(await urlProblem("https://nxdomain.webhook.test/", policy)).toContain("does not resolve");
    expect(await urlProblem(`https://${receiverHost("pub")}/`, policy)).toBeNull();
  });
});

describe("webhook URL rules through the API in the production configuration", () => {
  it("answers 400 for private targets at creation", async () => {
    const w = await createWorld();
    for (const url of ["https://127.0.0.1/hook", "http://example.com/", "https://rebind.webhook.test/", "https://[fd00::5]/"]) {
      const res = await callAs(productionEnv, "POST", "/team/webhook", w.teamA.sk, { name: "x", url, events: ["*"] });
      expect(res.status, url).toBe(400);
      expect((await json(res)).message).toContain("url");
    }
    const ok = await callAs(productionEnv, "POST", "/team/webhook", w.teamA.sk, {
      name: "x",
      url: `https://${receiverHost("prod")}/`,
      events: ["*"],
    });
    expect(ok.status).toBe(201);
  });

  it("checks again at send time: a host that now resolves to a private address is refused, not retried", async () => {
    const w = await createWorld();
    const host = receiverHost("moved");
    const created = await callAs(productionEnv, "POST", "/team/webhook", w.teamA.sk, { name: "x", url: `https://${host}/`, events: ["*"] });
    expect(created.status).toBe(201);
    const hook = await json(created);
    // The host's DNS answer changes after creation (simulated: the stub resolves rebind.* to 127.0.0.1).
    await env.DB.prepare("UPDATE webhooks SET url = ? WHERE id = ?").bind("https://rebind.webhook.test/", hook.id).run();

    const event = await storeEvent(w.teamA.id);
    expect(await runQueue(EVENTS_QUEUE, { kind: "event", event }, 1, productionEnv)).toMatchObject({ acked: true });
    const [delivery] = await deliveriesOf(event.id);
    expect(delivery).toMatchObject({ state: "failed", last_status: null });
    expect(delivery?.last_error).toContain("target refused");
    expect((await attemptsOf(delivery!.id))[0]?.error).toContain("127.0.0.1");
    expect(await receiverLog("rebind.webhook.test")).toEqual([]);

    const manual = await callAs(productionEnv, "POST", `/team/webhook/${hook.id}`, w.teamA.sk, { payload: {} });
    expect(manual.status).toBe(400);
  });
});
