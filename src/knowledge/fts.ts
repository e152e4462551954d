/**
 * User text to an FTS5 query. Every term is a quoted string (so punctuation, operators and
 * column names in the text mean nothing to FTS5), stopwords are dropped, and the terms are ORed
 * so that BM25 ranks passages by how many of the rarer words they contain.
 */
const STOPWORDS = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below between both " +
    "but by can could did do does doing down during each few for from further had has have having he her here hers " +
    "herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on " +
    "once only or other our ours ourselves out over own same she should so some such than that the their theirs them " +
    "themselves then there these they this those through to too under until up very was we were what when where which " +
    "while who whom why will with would you your yours yourself yourselves may might must shall also get got much many " +
    "tell please know let us use used using there's what's it's i'm"
  ).split(" "),
);

export const MAX_QUERY_TERMS = 24;

/** The distinct searchable words of a text, lower-cased, stopwords removed (unless nothing else is left). */
export function queryTerms(text: string): string[] {
  const words = (text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []).map((w) =>
    w.replace(/['’]s$/, "").replace(/['’]/g, ""),
  );
  const unique = [...new Set(words.filter(Boolean))];
  const content = unique.filter((w) => !STOPWORDS.has(w) && !(w.length === 1 && !/\p{N}/u.test(w)));
  return (content.length ? content : unique).slice(0, MAX_QUERY_TERMS);
}

/** The FTS5 MATCH expression for a text, or null when it has no searchable words. */
export function toFtsQuery(text: string): string | null {
  const terms = queryTerms(text);
  if (!terms.length) return null;
  return terms.map((t) => `"${t.replace(/"/g, '""')}"`).join(" OR ");
}
