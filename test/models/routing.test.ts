import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { matchSubAgent, routeMessage } from "../../src/models/agent-loop";
import { routeLexically } from "../../src/models/local-router";
import type { RoutingCandidate } from "../../src/models/local-router";
import { agent, fakeRequestWith } from "./helpers";

const SHIPPING: RoutingCandidate = { id: "ag_ship", name: "Shipping desk", description: "Handles shipping and deliveries.", notes: "" };
const BILLING: RoutingCandidate = { id: "ag_bill", name: "Billing desk", description: "Handles billing and refunds.", notes: "" };
const TECH: RoutingCandidate = {
  id: "ag_tech",
  name: "Technical support",
  description: "Helps with login problems, passwords, errors and bugs in the app.",
  notes: "",
};
const SALES: RoutingCandidate = { id: "ag_sales", name: "Sales", description: "Product questions, demos and enterprise plans for new customers.", notes: "" };
const HR: RoutingCandidate = { id: "ag_hr", name: "People team", description: "Employee questions about vacation, payroll and benefits.", notes: "" };
const LEGAL: RoutingCandidate = { id: "ag_legal", name: "Legal", description: "Privacy, GDPR and contract questions.", notes: "" };
const BOOKINGS: RoutingCandidate = { id: "ag_book", name: "Bookings", description: "Manages appointments and reservations.", notes: "" };
const GIFTS: RoutingCandidate = { id: "ag_gift", name: "Store help", description: "General store questions.", notes: "Also handles gift cards and their balances." };

const ALL = [BILLING, SHIPPING, TECH, SALES, HR, LEGAL, BOOKINGS];

const cases: [string, RoutingCandidate[], string][] = [
  ["My parcel is late", [BILLING, SHIPPING], SHIPPING.id],
  ["My parcel is late", ALL, SHIPPING.id],
  ["Where is my order? It still hasn't arrived.", ALL, SHIPPING.id],
  ["The delayed package was supposed to come on Monday", ALL, SHIPPING.id],
  ["I was charged twice on my last invoice", ALL, BILLING.id],
  ["I'd like a refund for last month's payment", [SHIPPING, BILLING], BILLING.id],
  ["I forgot my password and can't log in", ALL, TECH.id],
  ["The app crashes with an error when I open it", ALL, TECH.id],
  ["Can I get a demo of the enterprise plan?", ALL, SALES.id],
  ["How many vacation days do I have left?", ALL, HR.id],
  ["Do you store my personal data? What about GDPR?", ALL, LEGAL.id],
  ["I need to reschedule my appointment", ALL, BOOKINGS.id],
  ["What is the balance of my gift card?", [SHIPPING, BILLING, GIFTS], GIFTS.id],
  ["Tracking number please", [BILLING, SHIPPING, TECH], SHIPPING.id],
];

describe("lexical routing (local model)", () => {
  it.each(cases)("%s -> %#", (message, candidates, expected) => {
    expect(routeLexically(message, candidates)?.id).toBe(expected);
  });

  it("does not depend on the order of the candidates when one clearly matches", () => {
    for (const [message, candidates, expected] of cases) {
      expect(routeLexically(message, [...candidates].reverse())?.id, message).toBe(expected);
    }
  });

  it("explains its choice", () => {
    const route = routeLexically("My parcel is late", [BILLING, SHIPPING]);
    expect(route?.reason).toContain("shipping");
    expect(route?.reason).toContain("parcel");
    expect(route?.score).toBeGreaterThan(0);
  });

  it("returns null when nothing matches", () => {
    expect(routeLexically("blorp zzyzx", [BILLING, SHIPPING])).toBeNull();
    expect(routeLexically("anything", [])).toBeNull();
  });

  it("is deterministic", () => {
    const a = routeLexically("Where is my order? It was charged twice", ALL);
    const b = routeLexically("Where is my order? It was charged twice", ALL);
    expect(b).toEqual(a);
  });
});

function team(model: string) {
  const ship = agent({ name: SHIPPING.name, description: SHIPPING.description });
  const bill = agent({ name: BILLING.name, description: BILLING.description });
  const supervisor = agent({ name: "Front desk", type: "supervisor", model, subAgents: [bill.id, ship.id] });
  return { ship, bill, supervisor, subAgents: [bill, ship] };
}

describe("routeMessage", () => {
  it("local supervisor: the delayed parcel goes to shipping, not billing", async () => {
    const t = team("local");
    const route = await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: "My parcel is late" });
    expect(route).toMatchObject({ agentId: t.ship.id, fallback: false });
  });

  it("local supervisor without any signal: the first sub-agent, marked as fallback", async () => {
    const t = team("local");
    const route = await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: "blorp" });
    expect(route).toMatchObject({ agentId: t.bill.id, fallback: true });
  });

  it("no sub-agents: the supervisor answers itself; one sub-agent: that one", async () => {
    const t = team("local");
    expect((await routeMessage({ env, supervisor: t.supervisor, subAgents: [], userMessage: "hi" })).agentId).toBe(t.supervisor.id);
    expect((await routeMessage({ env, supervisor: t.supervisor, subAgents: [t.ship], userMessage: "refund" })).agentId).toBe(t.ship.id);
  });

  // openai:fake-parrot answers with the user's message, so the message is the "model's answer".
  it("remote supervisor: an answer with a valid id is followed", async () => {
    const t = team("openai:fake-parrot");
    const route = await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: t.bill.id });
    expect(route).toMatchObject({ agentId: t.bill.id, fallback: false });
  });

  it("remote supervisor: the routing prompt is rendered with the roster and sent at temperature 0", async () => {
    const t = team("openai:fake-parrot");
    await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: `route ${t.ship.id}` });
    const [sent] = await fakeRequestWith("fake-parrot", `route ${t.ship.id}`);
    expect(sent?.body.temperature).toBe(0);
    expect(sent?.body.messages[0].content).toContain("You are a supervisor");
    expect(sent?.body.messages[0].content).toContain(`id: ${t.ship.id}`);
  });

  it("remote supervisor: an exact name is the second chance", async () => {
    const t = team("openai:fake-parrot");
    const route = await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: "shipping DESK" });
    expect(route).toMatchObject({ agentId: t.ship.id, fallback: false });
  });

  it("remote supervisor: an answer naming no sub-agent falls back to the lexical choice", async () => {
    const t = team("openai:fake-parrot");
    const route = await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: "My parcel is late" });
    expect(route).toMatchObject({ agentId: t.ship.id, fallback: true });
    expect(route.reason).toContain("named no sub-agent");
  });

  it("remote supervisor failing (HTTP 500): falls back, never throws", async () => {
    const t = team("openai:fake-500");
    const route = await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: "I want a refund" });
    expect(route).toMatchObject({ agentId: t.bill.id, fallback: true });
    expect(route.reason).toContain("failed");
  });

  it("Workers AI supervisor without the AI binding: falls back", async () => {
    const t = team("@cf/meta/llama-3.1-8b-instruct");
    const route = await routeMessage({ env, supervisor: t.supervisor, subAgents: t.subAgents, userMessage: "blorp" });
    expect(route).toMatchObject({ agentId: t.bill.id, fallback: true });
  });
});

describe("matchSubAgent", () => {
  const c = [
    { id: "agt_1", name: "Billing" },
    { id: "agt_2", name: "Shipping" },
  ];
  it("accepts the id exactly, quoted, prefixed or within a sentence", () => {
    expect(matchSubAgent("agt_2", c)).toBe("agt_2");
    expect(matchSubAgent(" `agt_2`. ", c)).toBe("agt_2");
    expect(matchSubAgent("id: agt_1", c)).toBe("agt_1");
    expect(matchSubAgent("The best specialist is agt_1.", c)).toBe("agt_1");
  });
  it("accepts an exact name; rejects ambiguity and unknowns", () => {
    expect(matchSubAgent("shipping", c)).toBe("agt_2");
    expect(matchSubAgent("agt_1 or agt_2", c)).toBeNull();
    expect(matchSubAgent("Shipping team", c)).toBeNull();
    expect(matchSubAgent("", c)).toBeNull();
  });
});
