import { describe, expect, it } from "vitest";
import { call, createWorld, json } from "../helpers/world";
import { fixture, settled, upload } from "./helpers";

type Citation = { fileId: string; filename: string; passage: string };

async function ask(key: string, agentId: string, content: string) {
  const chat = await json<{ id: string }>(await call("POST", "/chat", { key, body: { agentId } }));
  const res = await call("POST", `/chat/${chat.id}/message`, { key, body: { content, role: "user" } });
  expect(res.status, await res.clone().text()).toBe(200);
  return json<{ content: string; citations?: Citation[] }>(res);
}

describe("AgentKnowledgeTool in answers", { timeout: 60_000 }, () => {
  it("answers from the agent's knowledge and cites file id, name and passage", async () => {
    const w = await createWorld();
    const agent = await json<{ id: string }>(
      await call("POST", "/agent", { key: w.teamA.sk, body: { name: "Barista", tools: ["AgentKnowledgeTool"] } }),
    );
    const other = await json<{ id: string }>(
      await call("POST", "/agent", { key: w.teamA.sk, body: { name: "Clerk", tools: ["AgentKnowledgeTool"] } }),
    );
    const file = await json<{ id: string }>(
      await upload(w.teamA.sk, "manual.pdf", fixture("coffee-machine-manual.pdf"), { agentId: agent.id }),
    );
    expect((await settled(w.teamA.sk, "manual.pdf")).status).toBe("ready");

    const answer = await ask(w.teamA.pk, agent.id, "What does error code E03 mean?");
    expect(answer.content).toContain("brewing unit is blocked");
    expect(answer.citations?.[0]).toMatchObject({ fileId: file.id, filename: "manual.pdf" });
    expect(answer.citations?.[0]?.passage).toContain("Error code E03 means the brewing unit is blocked.");

    // The file belongs to the Barista: the Clerk cannot see it.
    const elsewhere = await ask(w.teamA.pk, other.id, "What does error code E03 mean?");
    expect(elsewhere.citations ?? []).toEqual([]);
  });
});
