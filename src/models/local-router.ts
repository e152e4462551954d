/**
 * The local model's routing decision: which specialist's name, description and notes best match a
 * message. Deterministic and offline.
 *
 * Score of a specialist = word overlap + concept overlap, where
 * - word overlap sums, over the message's content terms (stemmed, stopwords removed) found in the
 *   specialist's text, the field weight (name 2, description 1.5, notes 1) times an idf across the
 *   specialists (a word every specialist mentions, like "support", decides nothing); a synonym
 *   counts half;
 * - concept overlap sums, over the concepts of the built-in lexicon (shipping, billing, returns,
 *   technical, account, sales, people, legal, scheduling, ...) signalled by both the message and the
 *   specialist, the field weight times the concept's idf, more when the message signals it with
 *   several words. So "my parcel is late" reaches "handles shipping and deliveries" through the
 *   shipping concept although they share no word.
 * The highest score wins; ties go to the specialist listed first. No positive score: null.
 */
import { conceptsOf, contentTerms, synonymsOf } from "./text";

export type RoutingCandidate = { id: string; name: string; description: string; notes: string };
export type LexicalRoute = { id: string; score: number; reason: string };

const FIELD_WEIGHTS = { name: 2, description: 1.5, notes: 1 } as const;

type Profile = { terms: Map<string, number>; concepts: Map<string, number> };

function profile(c: RoutingCandidate): Profile {
  const terms = new Map<string, number>();
  const concepts = new Map<string, number>();
  for (const field of ["name", "description", "notes"] as const) {
    const w = FIELD_WEIGHTS[field];
    for (const t of contentTerms(c[field])) terms.set(t, Math.max(terms.get(t) ?? 0, w));
    for (const concept of conceptsOf(c[field]).keys()) concepts.set(concept, Math.max(concepts.get(concept) ?? 0, w));
  }
  return { terms, concepts };
}

const idf = (n: number, df: number) => (df === 0 ? 0 : Math.log((n + 1) / df));

export function routeLexically(message: string, candidates: RoutingCandidate[]): LexicalRoute | null {
  if (candidates.length === 0) return null;
  const n = candidates.length;
  const profiles = candidates.map(profile);
  const terms = [...new Set(contentTerms(message))];
  const concepts = conceptsOf(message);
  const termDf = (t: string) => profiles.filter((p) => p.terms.has(t)).length;
  const conceptDf = (c: string) => profiles.filter((p) => p.concepts.has(c)).length;

  let best: LexicalRoute | null = null;
  candidates.forEach((cand, i) => {
    const p = profiles[i] as Profile;
    let score = 0;
    const why: string[] = [];
    for (const t of terms) {
      const w = p.terms.get(t);
      if (w) {
        score += w * idf(n, termDf(t));
        why.push(`"${t}"`);
        continue;
      }
      const syn = [...synonymsOf(t)].find((s) => p.terms.has(s));
      if (syn) {
        score += 0.5 * (p.terms.get(syn) ?? 0) * idf(n, termDf(syn));
        why.push(`"${t}"~"${syn}"`);
      }
    }
    for (const [concept, signals] of concepts) {
      const w = p.concepts.get(concept);
      if (!w) continue;
      score += w * idf(n, conceptDf(concept)) * Math.min(2, 1 + 0.5 * (signals.length - 1));
      why.push(`${concept} (${signals.join(", ")})`);
    }
    if (score > 0 && (!best || score > best.score + 1e-9)) {
      best = { id: cand.id, score: Math.round(score * 1000) / 1000, reason: `matched ${why.join(", ")} with ${cand.name}` };
    }
  });
  return best;
}
