import { describe, expect, it } from "vitest";
import { buildSystemPrompt } from "../../src/models/agent-loop";
import { chunkText, localModel, parsePersona } from "../../src/models/local";
import type { ChatTurn, GenerateRequest, ToolSpec } from "../../src/models/provider";
import { estimateTokens } from "../../src/models/text";
import { KNOWLEDGE_TOOL, encodeKnowledgeResult, knowledgeToolSpec } from "../../src/models/tools";
import type { AgentConfig } from "../../src/db/schema";
import { collect, config } from "./helpers";

const support: AgentConfig = config({
  name: "Shop Assistant",
  description: "Answers questions about orders, shipping and refunds for the Acme shop.",
  systemPrompt: "You are a friendly assistant for the Acme shop.",
  notes: "The shop is closed on public holidays.",
  actions: ["Greet the user", "Ask for the order number"],
  tools: [KNOWLEDGE_TOOL],
});

function request(cfg: AgentConfig, turns: ChatTurn[], tools: ToolSpec[] | null = [knowledgeToolSpec]): GenerateRequest {
  return {
    model: "local",
    messages: [{ role: "system", content: buildSystemPrompt(cfg, tools?.map((t) => t.name) ?? []) }, ...turns],
    tools: tools ?? undefined,
    temperature: 0.7,
  };
}

const HANDBOOK = [
  "Returns are accepted within 30 days of delivery. Refunds are issued within 14 days of the return being received.",
  "Refunds go back to the original payment method.",
].join(" ");
const SHIPPING = "Shipping is handled by DHL. Standard shipping takes 3-5 business days. Express shipping costs 9 EUR.";

/** A turn after the model searched: the search call and its result. */
function searched(question: string, passages: { filename: string; text: string }[]): ChatTurn[] {
  return [
    { role: "user", content: question },
    { role: "assistant", content: "", toolCalls: [{ id: "call_1", name: KNOWLEDGE_TOOL, arguments: { query: question } }] },
    {
      role: "tool",
      toolCallId: "call_1",
      name: KNOWLEDGE_TOOL,
      content: encodeKnowledgeResult(passages.map((p, i) => ({ fileId: `file_${i}`, filename: p.filename, text: p.text, score: 1 }))),
    },
  ];
}

describe("local model: persona", () => {
  it("reads name, description, notes and actions back from the rendered system prompt", () => {
    const p = parsePersona(buildSystemPrompt(support, [KNOWLEDGE_TOOL]));
    expect(p.name).toBe("Shop Assistant");
    expect(p.description).toBe(support.description);
    expect(p.notes).toBe(support.notes);
    expect(p.actions).toEqual(["Greet the user", "Ask for the order number"]);
    expect(p.instructions).toBe("You are a friendly assistant for the Acme shop.");
  });
});

describe("local model: knowledge tool", () => {
  it("calls AgentKnowledgeTool with the question's key words when it has not searched yet", async () => {
    const out = await collect(localModel, request(support, [{ role: "user", content: "How long do refunds take?" }]));
    expect(out.text).toBe("");
    expect(out.toolCalls).toHaveLength(1);
    expect(out.toolCalls[0]?.name).toBe(KNOWLEDGE_TOOL);
    expect(out.toolCalls[0]?.arguments).toEqual({ query: "refunds" });
    expect(out.usage?.inputTokens).toBeGreaterThan(0);
  });

  it("does not search for greetings or thanks, even with the tool on offer", async () => {
    for (const content of ["Hello!", "thanks a lot", "good morning"]) {
      const out = await collect(localModel, request(support, [{ role: "user", content }]));
      expect(out.toolCalls, content).toEqual([]);
      expect(out.text.length, content).toBeGreaterThan(0);
    }
  });

  it("quotes the most relevant sentence and names its file", async () => {
    const out = await collect(
      localModel,
      request(support, searched("How long do refunds take?", [
        { filename: "shipping.txt", text: SHIPPING },
        { filename: "handbook.pdf", text: HANDBOOK },
      ])),
    );
    expect(out.toolCalls).toEqual([]);
    expect(out.text).toContain('According to handbook.pdf: "Refunds are issued within 14 days of the return being received.');
    expect(out.text).not.toContain("DHL");
    expect(out.text).not.toContain("shipping.txt");
  });

  it("prefers the sentence that answers the question's shape (how long -> a duration)", async () => {
    const out = await collect(localModel, request(support, searched("How long does shipping take?", [{ filename: "shipping.txt", text: SHIPPING }])));
    expect(out.text).toContain('According to shipping.txt: "Standard shipping takes 3-5 business days.');
  });

  it("matches synonyms: a question about cost finds a sentence about the price", async () => {
    const out = await collect(
      localModel,
      request(support, searched("What does gift wrapping cost?", [
        { filename: "faq.txt", text: "Gift wrapping is available for all items. The price of gift wrapping is 3 EUR per parcel. We ship worldwide." },
      ])),
    );
    expect(out.text).toContain('"The price of gift wrapping is 3 EUR per parcel."');
    expect(out.text).not.toContain("worldwide");
  });

  it("says plainly when the passages say nothing relevant, and what it can help with", async () => {
    const out = await collect(localModel, request(support, searched("What is the warranty on laptops?", [{ filename: "shipping.txt", text: SHIPPING }])));
    expect(out.text).toContain("I don't have any information about");
    expect(out.text).toContain("warranty");
    expect(out.text).toContain("Shop Assistant");
    expect(out.text).toContain("orders, shipping and refunds");
    expect(out.text).not.toContain("According to");
  });

  it("says so too when the search found nothing at all", async () => {
    const out = await collect(localModel, request(support, searched("Do you sell bicycles?", [])));
    // "Hello!" first: the agent's actions say "Greet the user" and this is its first reply
    expect(out.text).toMatch(/^Hello! I'm sorry, I don't have any information about "sell bicycles" in my knowledge\./);
  });

  it("answers from its notes when they hold the answer (no tool needed)", async () => {
    const cfg = config({ name: "Billing", notes: "Refunds take 5 business days. Invoices are sent by email." });
    const out = await collect(localModel, request(cfg, [{ role: "user", content: "how long do refunds take" }], null));
    expect(out.text).toBe('From my notes: "Refunds take 5 business days."');
  });

  it("follows its actions: greets first and asks for what the actions say, once", async () => {
    const turns = searched("Where is my parcel?", [{ filename: "shipping.txt", text: "Parcels can be tracked with the link in your confirmation email." }]);
    const first = await collect(localModel, request(support, turns));
    expect(first.text).toMatch(/^Hello! According to shipping\.txt: "Parcels can be tracked/);
    expect(first.text).toContain("Could you share the order number?");
    const later = await collect(
      localModel,
      request(support, [{ role: "user", content: "hi" }, { role: "assistant", content: first.text }, ...turns]),
    );
    expect(later.text).not.toContain("Could you share the order number?");
    expect(later.text.startsWith("Hello!")).toBe(false);
  });

  it("folds the previous question into a short follow-up's search", async () => {
    const out = await collect(
      localModel,
      request(support, [
        { role: "user", content: "Can I return a damaged blender?" },
        { role: "assistant", content: "Yes, within 30 days." },
        { role: "user", content: "and how long does that take?" },
      ]),
    );
    expect(out.toolCalls[0]?.arguments).toEqual({ query: "return damaged blender" });
  });
});

describe("local model: small talk and identity", () => {
  it("greets with its name and description", async () => {
    const out = await collect(localModel, request(support, [{ role: "user", content: "Hi there" }]));
    expect(out.text).toBe(
      "Hello! I'm Shop Assistant: answers questions about orders, shipping and refunds for the Acme shop. How can I help you today?",
    );
  });

  it("answers 'what can you do?' from its name, description and actions", async () => {
    const out = await collect(localModel, request(support, [{ role: "user", content: "What can you do?" }]));
    expect(out.toolCalls).toEqual([]);
    expect(out.text).toContain("I'm Shop Assistant");
    expect(out.text).toContain("orders, shipping and refunds");
    expect(out.text).toContain("greet the user; ask for the order number");
    expect(out.text).toContain("knowledge files");
  });

  it("thanks and goodbyes", async () => {
    expect((await collect(localModel, request(support, [{ role: "user", content: "Thank you!" }]))).text).toBe(
      "You're welcome! Is there anything else I can help you with?",
    );
    expect((await collect(localModel, request(support, [{ role: "user", content: "bye" }]))).text).toContain("Goodbye");
  });

  it("uses a default name when the prompt has none", async () => {
    const out = await collect(localModel, {
      model: "local",
      messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hello" }],
      temperature: 0,
    });
    expect(out.text).toBe("Hello! I'm your assistant. How can I help you today?");
  });
});

describe("local model: determinism, streaming, usage", () => {
  it("gives the same events for the same input, whatever the temperature", async () => {
    const turns = searched("How long do refunds take?", [{ filename: "handbook.pdf", text: HANDBOOK }]);
    const a = await collect(localModel, { ...request(support, turns), temperature: 0 });
    const b = await collect(localModel, { ...request(support, turns), temperature: 1 });
    const c = await collect(localModel, { ...request(support, turns), temperature: 0 });
    expect(b.events).toEqual(a.events);
    expect(c.events).toEqual(a.events);
  });

  it("streams an answer as several word deltas that join to the text, with estimated usage", async () => {
    const req = request(support, searched("How long do refunds take?", [{ filename: "handbook.pdf", text: HANDBOOK }]));
    const out = await collect(localModel, req);
    expect(out.deltas.length).toBeGreaterThan(3);
    expect(out.deltas.join("")).toBe(out.text);
    expect(out.usage?.outputTokens).toBe(estimateTokens(out.text));
    expect(out.events.at(-1)?.type).toBe("done");
  });

  it("chunkText keeps every character", () => {
    const text = "  one two  three\nfour five six seven eight nine ";
    expect(chunkText(text).join("")).toBe(text);
    expect(chunkText("")).toEqual([]);
  });
});
