import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, createWorld, json } from "../helpers/world";
import { settled, text, upload } from "../knowledge/helpers";
import { createWebhook, receiverHost, receiverLog } from "../webhooks/helpers";

/** Review of the indirect paths between teams: every one answers 404 (or 400) and changes nothing. */

async function agentOf(sk: string, body: Record<string, unknown> = {}) {
  const res = await call("POST", "/agent", { key: sk, body: { name: "Agent", ...body } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await json(res)).id as string;
}

describe("publishable gate", { timeout: 30_000 }, () => {
  it("cannot be bypassed by slashes, encoding, case, HEAD or the /team/{teamId} prefix", async () => {
    const w = await createWorld();
    const agent = await agentOf(w.teamA.sk);
    const chat = await json(await call("POST", "/chat", { key: w.teamA.sk, body: { agentId: agent } }));
    const attempts: [string, string][] = [
      ["GET", "/chat"], ["GET", "/chat/"], ["GET", "//chat"], ["GET", "/CHAT"], ["GET", "/%63hat"],
      ["GET", "/agent"], ["GET", "/agent/"], ["GET", "//agent"], ["GET", "/%61gent"], ["HEAD", "/agent"], ["HEAD", `/chat/${chat.id}`],
      ["GET", `/chat/%2e%2e/agent`], ["GET", `/chat/x/../../agent`], ["GET", `/chat/${chat.id}//message`],
      ["DELETE", `/chat/${chat.id}`], ["PUT", `/chat/${chat.id}`], ["GET", `/team/${w.teamA.id}/chat/${chat.id}`],
      ["GET", `/team/${w.teamA.id}/agent`], ["GET", "/team/webhook"], ["GET", "/file"], ["GET", "/file/search?query=x"],
    ];
    for (const [method, path] of attempts) {
      const res = await call(method, path, { key: w.teamA.pk, body: method === "PUT" ? { title: "x" } : undefined });
      expect([403, 404], `${method} ${path}`).toContain(res.status);
      if (method !== "HEAD") expect((await json(res)).error, `${method} ${path}`).toMatch(/Forbidden|Not Found/);
    }
    // The agents list was never served, and the chat is unchanged.
    const after = await json(await call("GET", `/chat/${chat.id}`, { key: w.teamA.sk }));
    expect(after.title).toBeNull();
  });
});

describe("indirect paths between teams", { timeout: 60_000 }, () => {
  it("agents: another team's agent as a sub-agent is refused", async () => {
    const w = await createWorld();
    const mine = await agentOf(w.teamA.sk);
    const theirs = await agentOf(w.teamB.sk);
    const res = await call("POST", "/agent", { key: w.teamA.sk, body: { name: "Sup", type: "supervisor", subAgents: [mine, theirs] } });
    expect(res.status).toBe(400);
    expect((await json(res)).fields).toEqual([{ field: "subAgents.1", message: `"${theirs}" is not an agent of this team` }]);
    const sup = await agentOf(w.teamA.sk, { name: "Sup", type: "supervisor", subAgents: [mine] });
    expect((await call("PUT", `/agent/${sup}`, { key: w.teamA.sk, body: { subAgents: [theirs] } })).status).toBe(400);
    expect((await json(await call("GET", `/agent/${sup}`, { key: w.teamA.sk }))).subAgents).toEqual([mine]);
  });

  it("chats: another team's agent cannot be named, and PUT cannot move a chat to another agent", async () => {
    const w = await createWorld();
    const mine = await agentOf(w.teamA.sk);
    const theirs = await agentOf(w.teamB.sk);
    expect((await call("POST", "/chat", { key: w.teamA.sk, body: { agentId: theirs } })).status).toBe(404);
    expect((await call("POST", "/chat", { key: w.teamA.pk, body: { agentId: theirs, prompt: "hi" } })).status).toBe(404);
    const chat = await json(await call("POST", "/chat", { key: w.teamA.sk, body: { agentId: mine } }));
    const moved = await call("PUT", `/chat/${chat.id}`, { key: w.teamA.sk, body: { agentId: theirs } });
    expect(moved.status).toBe(400);
    expect((await json(await call("GET", `/chat/${chat.id}`, { key: w.teamA.sk }))).agentId).toBe(mine);
    // Team B's secret key, and an OWNER of B under its own team path, see nothing of it.
    for (const [key, prefix] of [[w.teamB.sk, ""], [w.outsider.userKey, `/team/${w.teamB.id}`]] as const) {
      expect((await call("GET", `${prefix}/chat/${chat.id}`, { key })).status).toBe(404);
      expect((await call("POST", `${prefix}/chat/${chat.id}/message`, { key, body: { content: "x" } })).status).toBe(404);
      expect((await call("PUT", `${prefix}/chat/${chat.id}`, { key, body: { title: "x" } })).status).toBe(404);
    }
    expect((await json(await call("GET", `/chat/${chat.id}/message`, { key: w.teamA.sk }))).messages).toEqual([]);
  });

  it("files: another team's agent is refused on confirm, update, list filter and search", async () => {
    const w = await createWorld();
    const theirs = await agentOf(w.teamB.sk);
    // The bytes are in place (as after a PUT to an upload URL): only the agent is wrong.
    await env.FILES.put(`uploads/${w.teamA.id}/a.txt`, text("The wifi password is swordfish."));
    expect((await call("POST", "/confirm-upload", { key: w.teamA.sk, body: { filename: "a.txt", agentId: theirs } })).status).toBe(404);
    expect((await upload(w.teamA.sk, "b.txt", text("The wifi password is swordfish."))).status).toBe(201);
    expect((await settled(w.teamA.sk, "b.txt")).status).toBe("ready");
    expect((await call("PUT", "/file?filename=b.txt", { key: w.teamA.sk, body: { agentId: theirs } })).status).toBe(404);
    expect((await json(await call("GET", `/file?agentId=${theirs}`, { key: w.teamA.sk }))).files).toEqual([]);
    expect((await call("GET", `/file/search?query=wifi&agentId=${theirs}`, { key: w.teamA.sk })).status).toBe(404);
    // Team B finds nothing of team A's, by search, name or id.
    expect((await json(await call("GET", "/file/search?query=wifi password", { key: w.teamB.sk }))).passages).toEqual([]);
    const fileId = (await json(await call("GET", "/file", { key: w.teamA.sk }))).files[0].id;
    expect((await call("GET", "/file/presigned-url?filename=b.txt", { key: w.teamB.sk })).status).toBe(404);
    expect((await call("DELETE", `/file?id=${fileId}`, { key: w.teamB.sk })).status).toBe(404);
    expect((await call("POST", `/file/reindex?id=${fileId}`, { key: w.teamB.sk })).status).toBe(404);
    expect((await json(await call("GET", "/file", { key: w.teamA.sk }))).files[0].agentId).toBeNull();
  });

  it("files: names cannot leave the team's storage prefix", async () => {
    const w = await createWorld();
    for (const filename of ["../x.txt", "..\\x.txt", "a/../../x.txt", `../${w.teamB.id}/x.txt`, "/etc/x.txt", "..", "x.txt\u0000.pdf"]) {
      const res = await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename } });
      expect(res.status, filename).toBe(400);
      expect((await call("POST", "/confirm-upload", { key: w.teamA.sk, body: { filename } })).status, filename).toBe(400);
      expect((await call("GET", `/file/presigned-url?filename=${encodeURIComponent(filename)}`, { key: w.teamA.sk })).status, filename).toBe(400);
    }
    const ok = await json(await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename: "..x.txt" } }));
    expect(ok.fileKey).toBe(`uploads/${w.teamA.id}/..x.txt`);
  });

  it("webhooks: deliveries and redeliver of another team's webhook are 404 and send nothing", async () => {
    const w = await createWorld();
    const host = receiverHost("iso2");
    const hook = await createWebhook(w.teamA.sk, { url: `https://${host}/fail` });
    const trigger = await json(await call("POST", `/team/webhook/${hook.id}`, { key: w.teamA.sk, body: { payload: { n: 1 } } }));
    const sentBefore = (await receiverLog(host)).length;
    const path = `/team/webhook/${hook.id}/deliveries/${trigger.deliveryId}/redeliver`;
    expect((await call("POST", path, { key: w.teamB.sk })).status).toBe(404);
    expect((await call("POST", `/team/${w.teamB.id}/webhook/${hook.id}/deliveries/${trigger.deliveryId}/redeliver`, { key: w.outsider.userKey })).status).toBe(404);
    // Team B's own webhook id with team A's delivery id is no path to it either.
    const theirs = await createWebhook(w.teamB.sk, { url: `https://${receiverHost("b")}/` });
    expect((await call("POST", `/team/webhook/${theirs.id}/deliveries/${trigger.deliveryId}/redeliver`, { key: w.teamB.sk })).status).toBe(404);
    expect((await json(await call("GET", `/team/webhook/${theirs.id}/deliveries`, { key: w.teamB.sk }))).deliveries).toEqual([]);
    expect((await receiverLog(host)).length).toBe(sentBefore);
  });

  it("secrets: no key, webhook secret or R2 secret in listings, events or the OpenAPI document", async () => {
    const w = await createWorld();
    const created = await json(await call("POST", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey, body: { type: "secret" } }));
    const hook = await createWebhook(w.teamA.sk, { url: `https://${receiverHost("s")}/` });
    expect(hook.secret).toMatch(/^whsec_/);
    const texts = [
      await (await call("GET", `/team/${w.teamA.id}/keys`, { key: w.owner.userKey })).text(),
      await (await call("GET", `/team/${w.teamA.id}`, { key: w.owner.userKey })).text(),
      await (await call("GET", "/team/webhook", { key: w.teamA.sk })).text(),
      await (await call("GET", `/team/webhook/${hook.id}`, { key: w.teamA.sk })).text(),
      await (await call("GET", "/openapi.json")).text(),
      await (await call("POST", "/upload-url", { key: w.teamA.sk, body: { filename: "a.txt" } })).text(),
      JSON.stringify((await env.DB.prepare("SELECT data FROM events WHERE team_id = ?").bind(w.teamA.id).all()).results),
    ];
    for (const t of texts) {
      expect(t).not.toContain(created.key);
      expect(t).not.toContain(w.teamA.sk);
      expect(t).not.toContain(hook.secret!);
      expect(t).not.toContain(env.R2_SECRET_ACCESS_KEY);
      expect(t).not.toContain(env.WEBHOOK_SECRET_KEY);
      expect(t).not.toMatch(/(sk|pk|usk)_live_[A-Za-z0-9]{40}/);
    }
  });
});
