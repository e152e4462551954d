import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ProviderError, providerFor } from "../../src/models/provider";
import type { GenerateRequest } from "../../src/models/provider";
import { knowledgeToolSpec } from "../../src/models/tools";
import { workersAiProvider } from "../../src/models/workers-ai";
import { collect } from "./helpers";

/**
 * A double of the remote-only AI binding returning the real shapes of env.AI.run for text generation:
 * non-streamed `{ response, tool_calls, usage }`, streamed a ReadableStream of server-sent events
 * `data: {"response":"..."}` ... `data: {"response":"","usage":{...}}` `data: [DONE]`.
 */
type Call = { model: string; inputs: Record<string, unknown>; options?: { signal?: AbortSignal } };

function sse(events: string[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(events.map((e) => `data: ${e}\n\n`).join(""));
  // split into uneven chunks so events straddle reads
  return new ReadableStream({
    start(c) {
      for (let i = 0; i < bytes.length; i += 7) c.enqueue(bytes.slice(i, i + 7));
      c.close();
    },
  });
}

function double(behaviour: (call: Call) => unknown | Promise<unknown>) {
  const calls: Call[] = [];
  const AI = {
    async run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }) {
      const call = { model, inputs, options };
      calls.push(call);
      return behaviour(call);
    },
  };
  return { env: { ...env, AI } as unknown as Env, calls };
}

const MODEL = "@cf/meta/llama-3.1-8b-instruct";
function req(extra: Partial<GenerateRequest> = {}): GenerateRequest {
  return {
    model: MODEL,
    messages: [
      { role: "system", content: "You are a test." },
      { role: "user", content: "Hello there" },
    ],
    temperature: 0.4,
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

describe("Workers AI provider (binding double with the real shapes)", () => {
  it("without the AI binding (local, tests) -> config error with a clear message", async () => {
    const err = await failure(collect(providerFor(env, MODEL), req()));
    expect(err.kind).toBe("config");
    expect(err.message).toContain("production");
  });

  it("streams `data: {response}` events, usage from the late event, until [DONE]", async () => {
    const d = double(() =>
      sse([
        '{"response":"Hel","p":"abc"}',
        '{"response":"lo, "}',
        '{"response":"world."}',
        '{"response":"","usage":{"prompt_tokens":11,"completion_tokens":3,"total_tokens":14}}',
        "[DONE]",
      ]),
    );
    const out = await collect(providerFor(d.env, MODEL), req());
    expect(out.deltas).toEqual(["Hel", "lo, ", "world."]);
    expect(out.usage).toEqual({ inputTokens: 11, outputTokens: 3 });
    expect(d.calls[0]?.model).toBe(MODEL);
    expect(d.calls[0]?.inputs).toMatchObject({
      stream: true,
      temperature: 0.4,
      max_tokens: 1024,
      messages: [
        { role: "system", content: "You are a test." },
        { role: "user", content: "Hello there" },
      ],
    });
    expect(d.calls[0]?.options?.signal).toBeInstanceOf(AbortSignal);
  });

  it("with tools and the user's message last: a whole response with legacy tool_calls", async () => {
    const d = double(() => ({
      response: "",
      tool_calls: [{ name: "AgentKnowledgeTool", arguments: { query: "refund policy" } }],
      usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    }));
    const out = await collect(providerFor(d.env, MODEL), req({ tools: [knowledgeToolSpec] }));
    expect(out.toolCalls).toEqual([{ id: "call_0", name: "AgentKnowledgeTool", arguments: { query: "refund policy" } }]);
    expect(out.usage).toEqual({ inputTokens: 20, outputTokens: 5 });
    expect(d.calls[0]?.inputs.stream).toBe(false);
    expect(d.calls[0]?.inputs.tools).toEqual([
      { type: "function", function: { name: "AgentKnowledgeTool", description: knowledgeToolSpec.description, parameters: knowledgeToolSpec.parameters } },
    ]);
  });

  it("reads the OpenAI-style tool_calls shape too (id + function.arguments as JSON text)", async () => {
    const d = double(() => ({
      response: null,
      tool_calls: [{ id: "chatcmpl-tool-1", type: "function", function: { name: "AgentKnowledgeTool", arguments: '{"query":"hours"}' } }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }));
    const out = await collect(providerFor(d.env, MODEL), req({ tools: [knowledgeToolSpec] }));
    expect(out.toolCalls).toEqual([{ id: "chatcmpl-tool-1", name: "AgentKnowledgeTool", arguments: { query: "hours" } }]);
  });

  it("after tool results it streams the answer, sending tool calls and results in the binding's shape", async () => {
    const d = double(() => sse(['{"response":"The answer."}', "[DONE]"]));
    const out = await collect(
      providerFor(d.env, MODEL),
      req({
        tools: [knowledgeToolSpec],
        messages: [
          { role: "user", content: "q" },
          { role: "assistant", content: "", toolCalls: [{ id: "call_0", name: "AgentKnowledgeTool", arguments: { query: "q" } }] },
          { role: "tool", toolCallId: "call_0", name: "AgentKnowledgeTool", content: '{"passages":[]}' },
        ],
      }),
    );
    expect(out.text).toBe("The answer.");
    // no usage event in this stream: estimated
    expect(out.usage?.outputTokens).toBe(Math.ceil("The answer.".length / 4));
    expect(d.calls[0]?.inputs.stream).toBe(true);
    expect((d.calls[0]?.inputs.messages as unknown[]).slice(1)).toEqual([
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "call_0", type: "function", function: { name: "AgentKnowledgeTool", arguments: '{"query":"q"}' } }],
      },
      { role: "tool", tool_call_id: "call_0", name: "AgentKnowledgeTool", content: '{"passages":[]}' },
    ]);
  });

  it("assembles tool calls streamed in fragments, skipping the null closing chunk", async () => {
    const d = double(() =>
      sse([
        '{"response":"","tool_calls":[{"id":"t1","type":"function","index":0,"function":{"name":"AgentKnowledgeTool"}}]}',
        '{"response":"","tool_calls":[{"index":0,"function":{"arguments":"{\\"query\\":"}}]}',
        '{"response":"","tool_calls":[{"index":0,"function":{"arguments":"\\"x\\"}"}}]}',
        '{"response":"","tool_calls":[{"id":null,"type":null,"function":{"name":null,"arguments":null}}]}',
        "[DONE]",
      ]),
    );
    const out = await collect(
      providerFor(d.env, MODEL),
      req({ tools: [knowledgeToolSpec], messages: [{ role: "assistant", content: "previous" }] }),
    );
    expect(out.toolCalls).toEqual([{ id: "t1", name: "AgentKnowledgeTool", arguments: { query: "x" } }]);
  });

  it("a binding error -> upstream", async () => {
    const d = double(() => {
      throw new Error("InferenceUpstreamError: 3040: Capacity temporarily exceeded");
    });
    expect((await failure(collect(providerFor(d.env, MODEL), req()))).kind).toBe("upstream");
  });

  it("a binding that never answers -> timeout", async () => {
    const d = double(() => new Promise(() => undefined));
    expect((await failure(collect(workersAiProvider(d.env, { timeoutMs: 200 }), req()))).kind).toBe("timeout");
  });

  it("a stream that stalls -> timeout", async () => {
    const d = double(
      () =>
        new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(new TextEncoder().encode('data: {"response":"Part"}\n\n'));
          },
        }),
    );
    expect((await failure(collect(workersAiProvider(d.env, { timeoutMs: 200 }), req()))).kind).toBe("timeout");
  });

  it("unexpected shapes -> malformed", async () => {
    const shapes: unknown[] = [
      "just a string",
      { response: 42 },
      { result: "wrong field" },
      { response: "", tool_calls: "nope" },
      { tool_calls: [{ name: "AgentKnowledgeTool", arguments: "{broken" }] },
      sse(["{not json", "[DONE]"]),
      sse(['{"response":"no done marker"}']),
      sse(['{"something":"else"}', "[DONE]"]),
    ];
    for (const [i, shape] of shapes.entries()) {
      const d = double(() => shape);
      const err = await failure(collect(providerFor(d.env, MODEL), req()));
      expect(err.kind, `shape ${i}`).toBe("malformed");
    }
  });
});
