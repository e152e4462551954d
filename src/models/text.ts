/**
 * Small, deterministic text analysis for the embedded local model and the lexical router:
 * tokenising, stopwords, a light suffix stemmer, tight synonym groups (for answering) and a
 * broader concept lexicon (for routing). No weights, no randomness: same input, same output.
 */

/** Rough token count used for budgets and the local model's usage: ~4 characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const STOPWORDS = new Set(
  (
    "a an the and or but if then else of to in on at by for with about from into onto over under up down out off " +
    "is am are was were be been being do does did done doing have has had having will would shall should can could " +
    "may might must i me my mine myself you your yours yourself we us our ours they them their theirs he him his she " +
    "her hers it its itself this that these those there here what which who whom whose when where why how " +
    "not no nor so too very just also only than as such any some all each every both either neither few more most " +
    "other another own same please pls thanks thank hi hello hey ok okay yes yeah " +
    "tell know want wanted need needed get got let like would could give show explain help find say said " +
    "much many long anyone someone something anything thing things way ever still yet again now today already " +
    // generic verbs and meta words: they say how something is asked, not what about
    "take takes took make makes go goes going come comes happen happens mean means put keep look see seem try " +
    "possible able sure really policy policies rule rules procedure process info information detail details " +
    "question questions wonder wondering"
  ).split(" "),
);

/** Words that carry a question's intent but no topic; kept for cue detection, not for matching. */
/** Lowercase word tokens (letters/digits, inner apostrophes and hyphens dropped). */
export function words(text: string): string[] {
  return (
    text
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .replace(/['’]s\b/g, "")
      .match(/[a-z0-9]+/g) ?? []
  );
}

const VOWEL = /[aeiouy]/;

/**
 * A light English suffix stemmer (a few rules, not Porter): plurals, -ing, -ed, -ly, final -e,
 * doubled final consonants. It only needs to map the forms people actually type ("refunds",
 * "refunded"; "shipping", "shipped", "ships"; "invoice", "invoices") onto one key.
 */
export function stem(word: string): string {
  let w = word.toLowerCase();
  if (w.length <= 3 || /^\d+$/.test(w)) return w;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);

  const strip = (suffix: string): boolean => {
    if (!w.endsWith(suffix)) return false;
    const base = w.slice(0, -suffix.length);
    if (base.length < 3 || !VOWEL.test(base)) return false;
    w = base;
    return true;
  };
  if (!w.endsWith("eed") && (strip("ing") || strip("ed"))) {
    // shipp -> ship, stopp -> stop (but keep ll/ss/zz: "billed" -> "bill")
    if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
  } else {
    strip("ly");
  }
  if (w.endsWith("y") && w.length > 3 && !VOWEL.test(w.charAt(w.length - 2))) w = `${w.slice(0, -1)}i`;
  if (w.endsWith("e") && w.length > 3) w = w.slice(0, -1);
  return w;
}

/** Content terms of a text: tokenised, stopwords removed, stemmed (order kept, duplicates kept). */
export function contentTerms(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w)))
    .map(stem);
}

/** The surface words behind contentTerms, for echoing a topic back to the user. */
export function contentWords(text: string): string[] {
  return words(text).filter((w) => !STOPWORDS.has(w) && (w.length > 1 || /\d/.test(w)));
}

/**
 * Tight synonym groups used when answering: a sentence that says "price" answers a question about
 * "cost". Each entry is a group of words (stemmed on load).
 */
const SYNONYM_GROUPS: string[][] = [
  ["price", "cost", "fee", "charge", "rate", "pricing", "expensive", "cheap"],
  ["refund", "reimburse", "reimbursement", "repay", "chargeback"],
  ["ship", "shipping", "shipment", "deliver", "delivery", "dispatch", "send", "courier", "post", "mail"],
  ["parcel", "package", "order", "shipment", "item", "delivery"],
  ["late", "delay", "delayed", "overdue", "slow", "behind"],
  ["track", "tracking", "status", "locate", "where"],
  ["return", "exchange", "send back"],
  ["cancel", "cancellation", "terminate", "stop", "unsubscribe"],
  ["password", "passcode", "passphrase", "credential"],
  ["login", "log", "signin", "sign", "access", "authenticate"],
  ["account", "profile", "user", "username"],
  ["buy", "purchase", "order"],
  ["broken", "damaged", "defective", "faulty", "cracked"],
  ["error", "bug", "crash", "failure", "fail", "issue", "problem", "glitch"],
  ["contact", "email", "phone", "call", "reach", "support"],
  ["open", "hour", "opening", "close", "closing", "schedule"],
  ["warranty", "guarantee"],
  ["invoice", "bill", "receipt", "statement"],
  ["pay", "payment", "paid", "card", "credit", "debit", "transfer"],
  ["discount", "coupon", "promo", "voucher", "sale"],
  ["vacation", "holiday", "leave", "pto", "time off"],
  ["salary", "pay", "payroll", "wage", "compensation"],
  ["book", "booking", "appointment", "reservation", "reserve", "schedule"],
  ["address", "location", "located", "office", "store", "branch"],
];

/** Question cues whose answer is usually a number or date: "how long" -> sentences with durations. */
export const CUE_TERMS: Record<string, string[]> = {
  duration: ["day", "week", "month", "year", "hour", "minute", "business", "within", "take", "long"],
  time: ["day", "date", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "am", "pm", "hour", "time", "open", "close"],
  place: ["address", "street", "located", "location", "office", "floor", "city", "building", "room"],
  amount: ["price", "cost", "fee", "usd", "eur", "dollar", "euro", "percent", "free"],
};

function stemGroup(group: string[]): string[] {
  return [...new Set(group.flatMap((w) => words(w).map(stem)))];
}

const SYNONYMS = new Map<string, Set<string>>();
for (const group of SYNONYM_GROUPS) {
  const stems = stemGroup(group);
  for (const s of stems) {
    const set = SYNONYMS.get(s) ?? new Set<string>();
    for (const other of stems) if (other !== s) set.add(other);
    SYNONYMS.set(s, set);
  }
}

/** Stemmed synonyms of a stemmed term (empty when none). */
export function synonymsOf(term: string): ReadonlySet<string> {
  return SYNONYMS.get(term) ?? EMPTY;
}
const EMPTY: ReadonlySet<string> = new Set();

export const STEMMED_CUES: Record<string, Set<string>> = Object.fromEntries(
  Object.entries(CUE_TERMS).map(([cue, terms]) => [cue, new Set(stemGroup(terms))]),
);

/** Which answer shapes a question asks for, from its interrogative words. */
export function questionCues(text: string): string[] {
  const t = ` ${words(text).join(" ")} `;
  const cues: string[] = [];
  if (/ how (long|many days|many weeks|soon) /.test(t)) cues.push("duration");
  if (/ (when|what time|which day|what day|opening hours|open) /.test(t)) cues.push("time");
  if (/ (where|what address|which address|located) /.test(t)) cues.push("place");
  if (/ (how much|price|cost|fee) /.test(t)) cues.push("amount");
  return cues;
}

/**
 * Concepts for routing: broad areas a specialist may cover, each with the words that signal it.
 * A message and an agent's name/description/notes that share a concept match even when they share
 * no word ("my parcel is late" ~ "handles shipping and deliveries").
 */
export const CONCEPTS: Record<string, string[]> = {
  shipping: [
    "ship", "shipping", "shipment", "deliver", "delivery", "deliveries", "parcel", "package", "courier", "tracking",
    "track", "transit", "late", "delay", "delayed", "arrive", "arrival", "dispatch", "postage", "post", "mail",
    "carrier", "logistics", "warehouse", "pickup", "eta", "lost", "order", "fedex", "ups", "dhl", "usps",
    "address", "stuck", "freight",
  ],
  billing: [
    "bill", "billing", "invoice", "charge", "charged", "overcharged", "payment", "pay", "paid", "refund", "money",
    "price", "cost", "fee", "subscription", "card", "credit", "debit", "receipt", "transaction", "tax", "vat",
    "bank", "finance", "financial", "accounting", "discount", "coupon", "plan", "renewal", "cancel", "dollar",
    "euro", "expensive", "reimburse", "chargeback",
  ],
  returns: [
    "return", "returns", "exchange", "refund", "replace", "replacement", "damaged", "broken", "defective", "wrong",
    "warranty", "faulty", "rma", "send back",
  ],
  technical: [
    "error", "bug", "crash", "crashes", "broken", "fail", "fails", "failure", "install", "installation", "setup",
    "configure", "configuration", "update", "upgrade", "app", "application", "software", "website", "site", "slow",
    "glitch", "troubleshoot", "fix", "api", "integration", "device", "technical", "tech", "server", "down",
    "outage", "timeout", "code", "browser", "network", "wifi", "connection", "sync", "not working", "freeze",
  ],
  account: [
    "password", "login", "log in", "sign in", "signin", "account", "username", "email", "profile", "2fa",
    "two factor", "authentication", "locked", "lockout", "reset", "verify", "verification", "register",
    "registration", "signup", "sign up", "settings", "access", "credential", "security", "mfa",
  ],
  sales: [
    "buy", "purchase", "pricing", "quote", "demo", "plan", "trial", "offer", "product", "products", "catalog",
    "availability", "available", "stock", "enterprise", "sales", "license", "bulk", "wholesale", "recommend",
  ],
  people: [
    "vacation", "holiday", "leave", "salary", "payroll", "benefit", "benefits", "hiring", "hire", "job", "career",
    "interview", "employee", "employees", "hr", "human resources", "onboarding", "sick", "parental", "pension",
    "recruit", "recruiting", "resume", "cv", "staff",
  ],
  legal: [
    "privacy", "gdpr", "personal data", "contract", "terms", "policy", "compliance", "legal", "law", "lawyer",
    "consent", "dispute", "liability", "nda", "agreement", "copyright", "trademark",
  ],
  scheduling: [
    "appointment", "booking", "book", "schedule", "reschedule", "reservation", "reserve", "meeting", "calendar",
    "slot", "availability", "cancel", "visit",
  ],
  health: [
    "doctor", "symptom", "symptoms", "medicine", "medication", "pain", "health", "medical", "clinic", "nurse",
    "prescription", "sick", "fever", "injury", "therapy",
  ],
  food: [
    "food", "menu", "recipe", "restaurant", "meal", "dish", "cook", "cooking", "ingredient", "diet", "vegan",
    "allergy", "allergen", "gluten", "drink", "table",
  ],
  travel: [
    "flight", "hotel", "travel", "trip", "airport", "luggage", "baggage", "passport", "visa", "ticket", "train",
    "destination", "itinerary", "check in",
  ],
  complaints: ["complaint", "complain", "unhappy", "angry", "disappointed", "terrible", "awful", "manager", "escalate", "feedback", "rude"],
};

/** stem (or "stem stem" phrase) -> concepts it signals. */
const CONCEPT_INDEX = new Map<string, Set<string>>();
const CONCEPT_PHRASES: { stems: string[]; concept: string }[] = [];
for (const [concept, list] of Object.entries(CONCEPTS)) {
  for (const entry of list) {
    const stems = words(entry).map(stem);
    if (stems.length === 1) {
      const key = stems[0] as string;
      const set = CONCEPT_INDEX.get(key) ?? new Set<string>();
      set.add(concept);
      CONCEPT_INDEX.set(key, set);
    } else if (stems.length > 1) {
      CONCEPT_PHRASES.push({ stems, concept });
    }
  }
}

/**
 * Concepts a text signals, with the words that signalled each. Unlike contentTerms this also
 * looks at question words ("where is my order" signals shipping through "where" + "order").
 */
export function conceptsOf(text: string): Map<string, string[]> {
  const all = words(text);
  const stems = all.map(stem);
  const found = new Map<string, string[]>();
  const add = (concept: string, word: string) => {
    const list = found.get(concept) ?? [];
    if (!list.includes(word)) list.push(word);
    found.set(concept, list);
  };
  stems.forEach((s, i) => {
    for (const concept of CONCEPT_INDEX.get(s) ?? []) add(concept, all[i] as string);
  });
  for (const { stems: phrase, concept } of CONCEPT_PHRASES) {
    for (let i = 0; i + phrase.length <= stems.length; i++) {
      if (phrase.every((p, j) => stems[i + j] === p)) add(concept, all.slice(i, i + phrase.length).join(" "));
    }
  }
  return found;
}

/** Sentences of a passage, split on terminal punctuation and line breaks; whitespace collapsed. */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=[^a-z])|\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)|\r?\n(?=[A-Z])/)
    .map((s) => s.replace(/\s+/g, " ").trim())
    .filter((s) => s.length > 0 && /[A-Za-z0-9]/.test(s));
}
