import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { openAiProvider } from "../../src/models/openai";
import { ProviderError, providerFor } from "../../src/models/provider";
import type { GenerateRequest } from "../../src/models/provider";
import { knowledgeToolSpec } from "../../src/models/tools";
import { collect, fakeRequestWith } from "./helpers";

function req(model: string, content: string, extra: Partial<GenerateRequest> = {}): GenerateRequest {
  return {
    model: `openai:${model}`,
    messages: [
      { role: "system", content: "You are a test." },
      { role: "user", content },
    ],
    temperature: 0.3,
    ...extra,
  };
}

async function failure(p: Promise<unknown>): Promise<ProviderError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ProviderError);
  return err as ProviderError;
}

describe("OpenAI-compatible provider against a fake endpoint over HTTP", () => {
  it("is chosen for openai:<model>", () => {
    expect(providerFor(env, "openai:fake-echo")).toBeDefined();
  });

  it("streams text as several deltas and reads usage from the final chunk", async () => {
    const out = await collect(providerFor(env, "openai:fake-echo"), req("fake-echo", "stream me please m1"));
    expect(out.text).toBe("You said: stream me please m1");
    expect(out.deltas.length).toBeGreaterThan(3);
    expect(out.usage).toEqual({ inputTokens: 42, outputTokens: 6 });
  });

  it("sends a chat-completions request: model, messages, temperature, stream + include_usage, tools, bearer key", async () => {
    await collect(providerFor(env, "openai:fake-echo"), req("fake-echo", "marker-m2", { tools: [knowledgeToolSpec] }));
    const [sent] = await fakeRequestWith("fake-echo", "marker-m2");
    expect(sent?.authorization).toBe("Bearer test-openai-key");
    expect(sent?.body).toMatchObject({
      model: "fake-echo",
      temperature: 0.3,
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: "system", content: "You are a test." },
        { role: "user", content: "marker-m2" },
      ],
      tools: [{ type: "function", function: { name: "AgentKnowledgeTool", parameters: knowledgeToolSpec.parameters } }],
    });
  });

  it("assembles a tool call streamed in argument fragments", async () => {
    const out = await collect(providerFor(env, "openai:fake-tools"), req("fake-tools", "find refunds", { tools: [knowledgeToolSpec] }));
    expect(out.text).toBe("");
    expect(out.toolCalls).toEqual([{ id: "call_a", name: "AgentKnowledgeTool", arguments: { query: "find refunds" } }]);
    expect(out.usage).toEqual({ inputTokens: 30, outputTokens: 10 });
  });

  it("assembles parallel tool calls by index", async () => {
    const out = await collect(providerFor(env, "openai:fake-two-tools"), req("fake-two-tools", "two", { tools: [knowledgeToolSpec] }));
    expect(out.toolCalls).toEqual([
      { id: "call_a", name: "AgentKnowledgeTool", arguments: { query: "two" } },
      { id: "call_b", name: "AgentKnowledgeTool", arguments: { query: "second" } },
    ]);
  });

  it("sends tool calls and tool results back in OpenAI's shape", async () => {
    const out = await collect(
      providerFor(env, "openai:fake-tools"),
      req("fake-tools", "marker-m3", {
        tools: [knowledgeToolSpec],
        messages: [
          { role: "user", content: "marker-m3" },
          { role: "assistant", content: "", toolCalls: [{ id: "call_a", name: "AgentKnowledgeTool", arguments: { query: "q" } }] },
          { role: "tool", toolCallId: "call_a", name: "AgentKnowledgeTool", content: '{"passages":[]}' },
        ],
      }),
    );
    expect(out.text).toBe('Tool said: {"passages":[]}');
    const [sent] = await fakeRequestWith("fake-tools", "marker-m3");
    expect(sent?.body.messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_a", type: "function", function: { name: "AgentKnowledgeTool", arguments: '{"query":"q"}' } }],
      },
      { role: "tool", tool_call_id: "call_a", content: '{"passages":[]}' },
    ]);
  });

  it("accepts a non-streamed JSON completion from servers that ignore stream", async () => {
    const out = await collect(providerFor(env, "openai:fake-json"), req("fake-json", "x"));
    expect(out.text).toBe("Whole answer.");
    expect(out.usage).toEqual({ inputTokens: 7, outputTokens: 2 });
  });

  it("estimates usage (~4 chars/token) when the server sends none", async () => {
    const out = await collect(providerFor(env, "openai:fake-no-usage"), req("fake-no-usage", "x"));
    expect(out.text).toBe("No usage here.");
    expect(out.usage).toEqual({ inputTokens: Math.ceil("You are a test.\nx".length / 4), outputTokens: Math.ceil(14 / 4) });
  });

  it("HTTP 500 -> upstream, without the upstream body in the error", async () => {
    const err = await failure(collect(providerFor(env, "openai:fake-500"), req("fake-500", "x")));
    expect(err.kind).toBe("upstream");
    expect(err.message).toContain("500");
    expect(err.message).not.toContain("UPSTREAM-SECRET");
  });

  it("HTTP 400 -> upstream", async () => {
    const err = await failure(collect(providerFor(env, "openai:fake-400"), req("fake-400", "x")));
    expect(err.kind).toBe("upstream");
    expect(err.message).not.toContain("UPSTREAM-SECRET");
  });

  it("no answer within the time limit -> timeout", async () => {
    const err = await failure(collect(openAiProvider(env, { timeoutMs: 300 }), req("fake-hang", "x")));
    expect(err.kind).toBe("timeout");
  });

  it("a stream that stalls mid-way -> timeout", async () => {
    const err = await failure(collect(openAiProvider(env, { timeoutMs: 300 }), req("fake-hang-stream", "x")));
    expect(err.kind).toBe("timeout");
  });

  it("the caller's abort is passed through as is, not as a timeout", async () => {
    const controller = new AbortController();
    const p = collect(openAiProvider(env, { timeoutMs: 5000 }), req("fake-hang", "x", { signal: controller.signal }));
    controller.abort(new Error("client went away"));
    await expect(p).rejects.toThrow("client went away");
  });

  it("garbage, missing fields, truncated streams and bad tool arguments -> malformed", async () => {
    for (const model of ["fake-garbage", "fake-no-choices", "fake-truncated", "fake-bad-args"]) {
      const err = await failure(collect(providerFor(env, `openai:${model}`), req(model, "x", { tools: [knowledgeToolSpec] })));
      expect(err.kind, model).toBe("malformed");
    }
  });

  it("configuration: no key for api.openai.com, or a bad base URL -> config", async () => {
    const noKey = { ...env, OPENAI_BASE_URL: "https://api.openai.com/v1", OPENAI_API_KEY: undefined } as Env;
    expect((await failure(collect(openAiProvider(noKey), req("gpt-4o-mini", "x")))).kind).toBe("config");
    const badUrl = { ...env, OPENAI_BASE_URL: "not a url" } as Env;
    expect((await failure(collect(openAiProvider(badUrl), req("gpt-4o-mini", "x")))).kind).toBe("config");
  });
});
