/**
 * The embedded local model: deterministic, offline, no weights. It is a small rule-based
 * "reader" rather than a language model, and it behaves like a tool-using assistant:
 *
 * - small talk (greetings, thanks, goodbyes) and questions about itself are answered from the
 *   agent's name, description and actions (read back from the rendered system prompt);
 * - any other message is a request for information: when AgentKnowledgeTool is offered and has not
 *   been called since the user's message, it calls it with the message's key words;
 * - with tool results (or the agent's notes) at hand, it quotes the sentences that best match the
 *   question (term overlap after stopwords and light stemming, synonyms, question cues such as
 *   "how long" favouring sentences with durations) and names the file;
 * - when nothing relevant is found it says so plainly and says what it can help with.
 *
 * Temperature is ignored: the same request always gives the same answer. Usage is an estimate of
 * ~4 characters per token (estimateTokens) of everything it read and wrote.
 */
import { KNOWLEDGE_TOOL, decodeKnowledgeResult } from "./tools";
import type { ToolPassage } from "./tools";
import type { ChatTurn, GenerateRequest, ModelProvider, StreamEvent, ToolCall } from "./types";
import {
  STEMMED_CUES,
  contentTerms,
  contentWords,
  estimateTokens,
  questionCues,
  sentences,
  stem,
  synonymsOf,
  words,
} from "./text";

/** The agent as the local model reads it back from the system prompt. */
export type Persona = { name: string; instructions: string; description: string; notes: string; actions: string[] };

const SECTION = /^# (Instructions|Description|Notes|Actions|Agent|Tools)[ \t]*$/gm;

/** Splits a system prompt rendered by renderSystemPrompt (+ the loop's # Agent section) back into its parts. */
export function parsePersona(system: string): Persona {
  const sections = new Map<string, string>();
  const marks = [...system.matchAll(SECTION)];
  marks.forEach((m, i) => {
    const start = (m.index ?? 0) + m[0].length;
    const end = i + 1 < marks.length ? (marks[i + 1]?.index ?? system.length) : system.length;
    const key = m[1] as string;
    if (!sections.has(key)) sections.set(key, system.slice(start, end).trim());
  });
  if (marks.length === 0) sections.set("Instructions", system.trim());
  const instructions = sections.get("Instructions") ?? "";
  const agent = sections.get("Agent") ?? "";
  const named = /^Name:\s*(.+)$/m.exec(agent)?.[1]?.trim();
  const youAre = /\byou are ([^,.\n]{2,60})/i.exec(instructions)?.[1]?.trim();
  const actions = (sections.get("Actions") ?? "")
    .split("\n")
    .map((l) => l.replace(/^\s*\d+[.)]\s*/, "").trim())
    .filter(Boolean);
  return {
    name: named || youAre || "your assistant",
    instructions,
    description: sections.get("Description") ?? "",
    notes: sections.get("Notes") ?? "",
    actions,
  };
}

type Intent = { greeting: boolean; thanks: boolean; bye: boolean; identity: boolean; topical: boolean };

const GREETING = /^(hi|hello|hey|hiya|howdy|greetings|good (morning|afternoon|evening|day)|yo|hallo|bonjour|hola)\b/;
const THANKS = /\b(thanks|thank you|thank u|thx|cheers|much appreciated|appreciate it)\b/;
const BYE = /\b(bye|goodbye|good bye|see you|see ya|have a (nice|good|great) (day|evening|one))\b/;
const IDENTITY =
  /\b(who are you|what are you|what is your name|what s your name|your name|what can you do|what do you do|how can you help|what can you help( me)? with|what can i ask( you)?|what are you for|introduce yourself|tell me about yourself)\b/;
/** Words of small talk, removed before deciding whether anything topical is left. */
const SMALL_TALK_WORDS = new Set(
  "hi hello hey hiya howdy greetings good morning afternoon evening day yo hallo bonjour hola thanks thank thx cheers much appreciated appreciate bye goodbye see ya nice great one there how doing fine well lot lots bunch guys folks everyone everybody awesome perfect cool great".split(
    " ",
  ),
);

const FOLLOW_UP = /\b(it|that|this|they|them|those|these|there|its|one)\b/;
const QUESTION = /\?\s*$|^(what|which|who|whom|whose|when|where|why|how|is|are|do|does|did|can|could|will|would|should|may)\b/;

/** `hasContext`: there was an earlier user message a bare follow-up ("and how long does that take?") refers to. */
function classify(message: string, hasContext: boolean): Intent {
  const norm = words(message).join(" ");
  const identity = IDENTITY.test(norm) || /^(help|help me|menu|options)$/.test(norm);
  const topicalWords = contentWords(message).filter((w) => !SMALL_TALK_WORDS.has(w));
  const followUp = hasContext && FOLLOW_UP.test(norm) && QUESTION.test(message.trim().toLowerCase());
  return {
    greeting: GREETING.test(norm),
    thanks: THANKS.test(norm),
    bye: BYE.test(norm),
    identity,
    topical: !identity && (topicalWords.length > 0 || followUp),
  };
}

/** The conversation as the local model needs it. */
type Reading = {
  persona: Persona;
  message: string;
  previousUser: string | null;
  priorAssistant: string[];
  /** Knowledge tool calls made since the user's message. */
  searched: number;
  passages: ToolPassage[];
};

function read(messages: ChatTurn[]): Reading {
  const system = messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n\n");
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (m.role === "user") lastUser = i;
  });
  const userTurns = messages.filter((m) => m.role === "user");
  const after = lastUser >= 0 ? messages.slice(lastUser + 1) : [];
  let searched = 0;
  const passages: ToolPassage[] = [];
  for (const turn of after) {
    if (turn.role === "assistant") searched += (turn.toolCalls ?? []).filter((c) => c.name === KNOWLEDGE_TOOL).length;
    if (turn.role === "tool" && turn.name === KNOWLEDGE_TOOL) passages.push(...decodeKnowledgeResult(turn.content));
  }
  return {
    persona: parsePersona(system),
    message: lastUser >= 0 ? (messages[lastUser] as { content: string }).content : "",
    previousUser: userTurns.length >= 2 ? (userTurns[userTurns.length - 2] as { content: string }).content : null,
    priorAssistant: messages.slice(0, Math.max(lastUser, 0)).flatMap((m) => (m.role === "assistant" ? [m.content] : [])),
    searched,
    passages,
  };
}

/** Key words to search for; a short follow-up ("and how long does that take?") borrows the previous question's. */
function searchWords(message: string, previousUser: string | null): string[] {
  const own = contentWords(message).filter((w) => !SMALL_TALK_WORDS.has(w));
  const followUp = previousUser && own.length <= 2 && FOLLOW_UP.test(words(message).join(" "));
  const merged = followUp ? [...contentWords(previousUser).filter((w) => !SMALL_TALK_WORDS.has(w)), ...own] : own;
  const unique = [...new Set(merged)];
  return (unique.length ? unique : words(message)).slice(0, 12);
}

type Candidate = { text: string; source: string; passage: number; position: number; stems: Set<string> };
type Scored = Candidate & { score: number; exact: number; coverage: number; matched: Set<string> };

/** Sentence candidates from the passages (source = file name) and from the agent's notes. */
function candidates(passages: ToolPassage[], notes: string): Candidate[] {
  const out: Candidate[] = [];
  passages.forEach((p, pi) => {
    sentences(p.text).forEach((s, si) =>
      out.push({ text: s, source: p.file || "my knowledge files", passage: pi, position: si, stems: new Set(contentTerms(s)) }),
    );
  });
  sentences(notes).forEach((s, si) =>
    out.push({ text: s, source: "", passage: passages.length, position: si, stems: new Set(contentTerms(s)) }),
  );
  return out;
}

/**
 * Scores every candidate sentence against the question. Query terms weigh more when few sentences
 * contain them (a mild idf), exact stems count 1, synonyms 0.6, and a matching question cue
 * ("how long" + a sentence with a number of days) adds 0.5.
 */
function score(question: string, followUp: string[], pool: Candidate[]): Scored[] {
  const own = [...new Set(contentTerms(question))];
  const borrowed = followUp.map(stem).filter((t) => !own.includes(t));
  const query = [...own.map((t) => ({ t, w: 1 })), ...[...new Set(borrowed)].map((t) => ({ t, w: 0.5 }))];
  if (query.length === 0) return [];
  const n = pool.length;
  const weights = query.map(({ t, w }) => {
    const df = pool.filter((c) => c.stems.has(t)).length;
    return w * Math.min(2, Math.max(0.5, 0.5 + Math.log((n + 1) / (df + 0.5)) / 2));
  });
  const total = weights.reduce((a, b) => a + b, 0);
  const cues = questionCues(question);
  return pool.map((c) => {
    let got = 0;
    let exact = 0;
    const matched = new Set<string>();
    query.forEach(({ t }, i) => {
      const w = weights[i] as number;
      if (c.stems.has(t)) {
        got += w;
        exact += 1;
        matched.add(t);
      } else if ([...synonymsOf(t)].some((s) => c.stems.has(s))) {
        got += 0.6 * w;
        matched.add(t);
      }
    });
    let bonus = 0;
    for (const cue of cues) {
      const terms = STEMMED_CUES[cue];
      const hasNumber = /\d/.test(c.text);
      if ((terms && [...terms].some((t) => c.stems.has(t))) || (hasNumber && cue !== "place")) bonus += 0.5;
    }
    return { ...c, score: got + (got > 0 ? bonus : 0), exact, coverage: total ? got / total : 0, matched };
  });
}

/** A sentence is relevant when it covers half of what was asked, or two terms of a long question. */
function relevant(s: Scored): boolean {
  return s.matched.size > 0 && (s.coverage >= 0.5 || (s.matched.size >= 2 && s.exact >= 1));
}

const MAX_QUOTES = 3;
const MAX_QUOTE_CHARS = 700;

function select(scored: Scored[]): Scored[] {
  const ranked = scored
    .filter(relevant)
    .sort((a, b) => b.score - a.score || a.passage - b.passage || a.position - b.position || a.text.length - b.text.length);
  const best = ranked[0];
  if (!best) return [];
  const picked: Scored[] = [best];
  let chars = best.text.length;
  for (const s of ranked.slice(1)) {
    if (picked.length >= MAX_QUOTES) break;
    if (s.score < best.score * 0.6 || chars + s.text.length > MAX_QUOTE_CHARS) continue;
    if (picked.some((p) => p.text === s.text)) continue;
    picked.push(s);
    chars += s.text.length;
  }
  return picked;
}

/** `According to handbook.pdf: "A" … "B"` — one line per source, sentences in document order. */
function quote(picked: Scored[]): string {
  const bySource = new Map<string, Scored[]>();
  for (const p of picked) bySource.set(p.source, [...(bySource.get(p.source) ?? []), p]);
  const lines: string[] = [];
  for (const [source, list] of bySource) {
    list.sort((a, b) => a.passage - b.passage || a.position - b.position);
    let text = "";
    list.forEach((s, i) => {
      const prev = list[i - 1];
      if (!prev) text = s.text;
      else text += prev.passage === s.passage && prev.position + 1 === s.position ? ` ${s.text}` : ` … ${s.text}`;
    });
    lines.push(source ? `According to ${source}: "${text}"` : `From my notes: "${text}"`);
  }
  return lines.join("\n");
}

function lowerFirst(s: string): string {
  return s && /^[A-Z][a-z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s;
}

function sentence(s: string): string {
  const t = s.trim();
  return t && !/[.!?]$/.test(t) ? `${t}.` : t;
}

function aboutMe(p: Persona): string {
  return p.description ? `I'm ${p.name}: ${lowerFirst(sentence(p.description))}` : `I'm ${p.name}.`;
}

/** Follow-up questions the agent's actions ask for ("Ask for the order number"), once per conversation. */
function actionQuestions(p: Persona, priorAssistant: string[]): string[] {
  const asks: string[] = [];
  for (const action of p.actions) {
    const m = /^ask (?:the (?:user|customer|client|visitor) )?(?:for|about) (.+?)\.?$/i.exec(action.trim());
    if (!m?.[1]) continue;
    const thing = m[1].replace(/\b(their|his|her)\b/gi, "your");
    const q = `Could you share ${thing}?`;
    if (!priorAssistant.some((a) => a.includes(q))) asks.push(q);
  }
  return asks;
}

function greetsFirst(p: Persona, priorAssistant: string[]): boolean {
  return priorAssistant.length === 0 && p.actions.some((a) => /^(greet|welcome|say hello)/i.test(a.trim()));
}

function smallTalk(r: Reading, intent: Intent, toolsOffered: boolean): string {
  const p = r.persona;
  if (intent.identity) {
    const parts = [aboutMe(p)];
    if (p.actions.length) parts.push(`How I work: ${p.actions.map((a) => lowerFirst(a.replace(/\.$/, ""))).join("; ")}.`);
    parts.push(
      toolsOffered
        ? "Ask me a question and I'll look for the answer in my knowledge files."
        : "Ask me a question and I'll answer from what I know.",
    );
    return parts.join(" ");
  }
  if (intent.thanks) return intent.bye ? "You're welcome! Goodbye." : "You're welcome! Is there anything else I can help you with?";
  if (intent.bye) return "Goodbye! Feel free to come back if you have more questions.";
  return `Hello! ${aboutMe(p)} How can I help you today?`;
}

function answer(r: Reading, intent: Intent): { text: string } {
  const p = r.persona;
  const followUpWords = r.previousUser && FOLLOW_UP.test(words(r.message).join(" ")) && contentWords(r.message).length <= 2
    ? contentWords(r.previousUser)
    : [];
  const picked = select(score(r.message, followUpWords, candidates(r.passages, p.notes)));
  const parts: string[] = [];
  if (intent.greeting || greetsFirst(p, r.priorAssistant)) parts.push("Hello!");
  if (picked.length) {
    parts.push(quote(picked));
    const asked = [...new Set(contentTerms(r.message))];
    const missing = contentWords(r.message).filter((w, i, all) => {
      const t = stem(w);
      return all.indexOf(w) === i && asked.length <= 3 && !picked.some((s) => s.matched.has(t));
    });
    if (missing.length) parts.push(`I found nothing specific about ${missing.join(", ")}.`);
    parts.push(...actionQuestions(p, r.priorAssistant));
  } else {
    const topic = searchWords(r.message, null).slice(0, 6).join(" ");
    parts.push(`I'm sorry, I don't have any information about "${topic}" in my knowledge.`);
    parts.push(
      p.description
        ? `${aboutMe(p)} Is there something in that area I can help you with?`
        : "Is there something else I can help you with?",
    );
  }
  return { text: parts.join(" ").replace(/ \n/g, "\n") };
}

/** Splits text into word-group deltas (up to 4 words each); joined they give the text back exactly. */
export function chunkText(text: string): string[] {
  const pieces = text.match(/\S+\s*/g) ?? [];
  const lead = /^\s+/.exec(text)?.[0] ?? "";
  const out: string[] = [];
  for (let i = 0; i < pieces.length; i += 4) out.push(pieces.slice(i, i + 4).join(""));
  if (lead) out[0] = lead + (out[0] ?? "");
  return out;
}

function inputTokens(req: GenerateRequest): number {
  const text = req.messages
    .map((m) => (m.role === "assistant" ? m.content + JSON.stringify(m.toolCalls ?? []) : m.content))
    .join("\n");
  return estimateTokens(text) + (req.tools?.length ? estimateTokens(JSON.stringify(req.tools)) : 0);
}

/** The local model's decision for a request: either one tool call or an answer text. */
export function decide(req: GenerateRequest): { toolCall: ToolCall } | { text: string } {
  const r = read(req.messages);
  const intent = classify(r.message, r.previousUser !== null);
  const toolsOffered = (req.tools ?? []).some((t) => t.name === KNOWLEDGE_TOOL);
  if (!intent.topical) return { text: smallTalk(r, intent, toolsOffered) };
  if (toolsOffered && r.searched === 0) {
    return {
      toolCall: {
        id: `call_local_${req.messages.length}`,
        name: KNOWLEDGE_TOOL,
        arguments: { query: searchWords(r.message, r.previousUser).join(" ") },
      },
    };
  }
  return answer(r, intent);
}

export const localModel: ModelProvider = {
  async *generate(req: GenerateRequest): AsyncIterable<StreamEvent> {
    const input = inputTokens(req);
    const decision = decide(req);
    if ("toolCall" in decision) {
      yield { type: "tool_call", call: decision.toolCall };
      yield { type: "done", usage: { inputTokens: input, outputTokens: estimateTokens(JSON.stringify(decision.toolCall)) } };
      return;
    }
    for (const delta of chunkText(decision.text)) {
      if (req.signal?.aborted) throw req.signal.reason;
      yield { type: "text", delta };
    }
    yield { type: "done", usage: { inputTokens: input, outputTokens: estimateTokens(decision.text) } };
  },
};
