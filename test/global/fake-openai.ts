/**
 * vitest globalSetup (runs in Node, not workerd): a fake OpenAI-compatible chat-completions
 * endpoint over real HTTP, for test/models. Tests in workerd cannot listen, so the server lives
 * here; its base URL is `provide`d and vitest.config.ts injects it as the OPENAI_BASE_URL binding.
 *
 * POST /v1/chat/completions behaves by the requested model name:
 *   fake-echo          streams "You said: <last user message>" in several chunks, usage last
 *   fake-parrot        streams exactly the last user message (a routing model that says what it is told)
 *   fake-tools         no tool result yet: streams a tool call to the first offered tool, split
 *                      across chunks; after a tool result: streams "Tool said: <result>"
 *   fake-two-tools     like fake-tools but two parallel calls (indexes 0 and 1), streamed interleaved
 *   fake-unknown-tool  first calls a tool named NoSuchTool, then answers with the tool result
 *   fake-loop          calls the first offered tool every time tools are offered; else "Final answer."
 *   fake-preamble      streams "Let me check." and a tool call in the same response, then answers
 *   fake-no-usage      streams text without a usage chunk
 *   fake-json          answers with a non-streamed JSON completion
 *   fake-500           HTTP 500 with a body that must never reach clients
 *   fake-400           HTTP 400
 *   fake-hang          never answers (headers included)
 *   fake-hang-stream   sends headers and one chunk, then stalls
 *   fake-garbage       200 text/event-stream whose data is not JSON
 *   fake-no-choices    200 stream of JSON objects without choices
 *   fake-truncated     a text chunk, then the connection ends without finish_reason or [DONE]
 *   fake-bad-args      a tool call whose arguments are not JSON
 * GET /__requests?model=<name> returns the JSON bodies (and authorization headers) received for it.
 */

type Incoming = AsyncIterable<Uint8Array> & { method?: string; url?: string; headers: Record<string, string | string[] | undefined> };
type Outgoing = {
  writeHead(status: number, headers: Record<string, string>): void;
  write(chunk: string): boolean;
  end(chunk?: string): void;
  flushHeaders(): void;
};
type Server = {
  listen(port: number, host: string, cb: () => void): void;
  address(): { port: number } | string | null;
  close(cb: () => void): void;
  closeAllConnections(): void;
};
type NodeHttp = { createServer(handler: (req: Incoming, res: Outgoing) => void): Server };

type Msg = { role: string; content?: string | null; tool_calls?: unknown[]; tool_call_id?: string };
type Body = { model: string; messages: Msg[]; tools?: { function: { name: string } }[]; stream?: boolean };

declare module "vitest" {
  interface ProvidedContext {
    fakeOpenAiBaseUrl: string;
  }
}

const received = new Map<string, { body: Body; authorization: string | null }[]>();

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}
const usage = (p: number, c: number) =>
  `data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } })}\n\n`;
const DONE = "data: [DONE]\n\n";

function words(text: string): string[] {
  return text.match(/\S+\s*/g) ?? [];
}

function streamText(res: Outgoing, text: string, withUsage = true): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(chunk({ role: "assistant", content: "" }));
  for (const w of words(text)) res.write(chunk({ content: w }));
  res.write(chunk({}, "stop"));
  if (withUsage) res.write(usage(42, words(text).length));
  res.end(DONE);
}

function toolCallChunks(index: number, id: string, name: string, args: string): string[] {
  const mid = Math.floor(args.length / 2);
  return [
    chunk({ tool_calls: [{ index, id, type: "function", function: { name, arguments: "" } }] }),
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, mid) } }] }),
    chunk({ tool_calls: [{ index, function: { arguments: args.slice(mid) } }] }),
  ];
}

function handle(body: Body, res: Outgoing): void {
  const last = body.messages[body.messages.length - 1];
  const lastUser = [...body.messages].reverse().find((m) => m.role === "user");
  const offered = body.tools?.map((t) => t.function.name) ?? [];
  const afterTool = last?.role === "tool";
  switch (body.model) {
    case "fake-echo":
      return streamText(res, `You said: ${lastUser?.content ?? ""}`);
    case "fake-parrot":
      return streamText(res, lastUser?.content ?? "");
    case "fake-no-usage":
      return streamText(res, "No usage here.", false);
    case "fake-tools":
    case "fake-two-tools":
    case "fake-unknown-tool":
    case "fake-preamble": {
      if (afterTool) return streamText(res, `Tool said: ${last?.content ?? ""}`);
      const name = body.model === "fake-unknown-tool" ? "NoSuchTool" : offered[0];
      if (!name) return streamText(res, "No tools offered.");
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (body.model === "fake-preamble") res.write(chunk({ content: "Let me check." }));
      const a = toolCallChunks(0, "call_a", name, JSON.stringify({ query: lastUser?.content ?? "" }));
      if (body.model === "fake-two-tools") {
        const b = toolCallChunks(1, "call_b", name, JSON.stringify({ query: "second" }));
        for (let i = 0; i < a.length; i++) res.write((a[i] as string) + (b[i] as string));
      } else {
        for (const c of a) res.write(c);
      }
      res.write(chunk({}, "tool_calls"));
      res.write(usage(30, 10));
      return res.end(DONE);
    }
    case "fake-loop": {
      const name = offered[0];
      if (!name) return streamText(res, "Final answer.");
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const c of toolCallChunks(0, `call_${body.messages.length}`, name, '{"query":"again"}')) res.write(c);
      res.write(chunk({}, "tool_calls"));
      return res.end(DONE);
    }
    case "fake-bad-args": {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ tool_calls: [{ index: 0, id: "call_x", type: "function", function: { name: "AgentKnowledgeTool", arguments: "{not json" } }] }));
      res.write(chunk({}, "tool_calls"));
      return res.end(DONE);
    }
    case "fake-json": {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(
        JSON.stringify({
          id: "chatcmpl-fake",
          object: "chat.completion",
          choices: [{ index: 0, message: { role: "assistant", content: "Whole answer." }, finish_reason: "stop" }],
          usage: { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 },
        }),
      );
    }
    case "fake-500":
      res.writeHead(500, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "UPSTREAM-SECRET internal stack trace" } }));
    case "fake-400":
      res.writeHead(400, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: "bad request UPSTREAM-SECRET" } }));
    case "fake-hang":
      return; // never answers; closed at teardown
    case "fake-hang-stream":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ content: "Partial" }));
      return; // stalls
    case "fake-garbage":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: {this is not json\n\n");
      return res.end(DONE);
    case "fake-no-choices":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify({ hello: "world" })}\n\n`);
      return res.end(DONE);
    case "fake-truncated":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk({ content: "Half an ans" }));
      return res.end();
    default:
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `unknown fake model ${body.model}` } }));
  }
}

export default async function setup({ provide }: { provide: (key: "fakeOpenAiBaseUrl", value: string) => void }) {
  // The project has no Node type definitions (workerd types only), hence the small local types above.
  const http = (await import("node:http" as string)) as NodeHttp;
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://fake");
      if (req.method === "GET" && url.pathname === "/__requests") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end(JSON.stringify(received.get(url.searchParams.get("model") ?? "") ?? []));
      }
      if (req.method !== "POST" || url.pathname !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "text/plain" });
        return res.end("not found");
      }
      const parts: Uint8Array[] = [];
      for await (const p of req) parts.push(p);
      const raw = new TextDecoder().decode(await new Blob(parts).arrayBuffer());
      let body: Body;
      try {
        body = JSON.parse(raw) as Body;
      } catch {
        res.writeHead(400, { "content-type": "text/plain" });
        return res.end("bad json");
      }
      const auth = req.headers.authorization;
      const list = received.get(body.model) ?? [];
      list.push({ body, authorization: typeof auth === "string" ? auth : null });
      received.set(body.model, list);
      handle(body, res);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  provide("fakeOpenAiBaseUrl", `http://127.0.0.1:${port}/v1`);
  return async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
}
