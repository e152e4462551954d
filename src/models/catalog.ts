/**
 * Model names as agents store them, and which provider serves each.
 *
 * Accepted forms (anything else is rejected with ACCEPTED_MODEL_FORMS in the message):
 * - "local" or "local:default"  the embedded local model (default; works everywhere, offline)
 * - "@cf/<path>"                a Workers AI model, e.g. "@cf/meta/llama-3.1-8b-instruct"
 * - "openai:<model>"            a model of the OpenAI-compatible endpoint configured by secrets, e.g. "openai:gpt-4o-mini"
 */

export type ModelProvider = "local" | "workers-ai" | "openai";

export type ParsedModel = {
  provider: ModelProvider;
  /** The provider's own name for the model: "default" (local), "@cf/..." (Workers AI, full id), "<model>" (OpenAI). */
  name: string;
};

/** The model an agent gets when it names none. */
export const DEFAULT_MODEL = "local:default";

export const ACCEPTED_MODEL_FORMS = [
  '"local" or "local:default" (embedded local model)',
  '"@cf/<model>" (Workers AI)',
  '"openai:<model>" (OpenAI-compatible endpoint)',
] as const;

const MAX_MODEL_LENGTH = 200;
// Model ids of both remote providers are path-like: letters, digits and . _ - / : @ +
const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._\-/:@+]*$/;

/** Parses a stored or requested model name; null when it names no known provider's model. */
export function parseModel(model: string): ParsedModel | null {
  if (model.length === 0 || model.length > MAX_MODEL_LENGTH) return null;
  if (model === "local" || model === "local:default") return { provider: "local", name: "default" };
  if (model.startsWith("@cf/")) {
    const rest = model.slice("@cf/".length);
    return REMOTE_NAME.test(rest) ? { provider: "workers-ai", name: model } : null;
  }
  if (model.startsWith("openai:")) {
    const rest = model.slice("openai:".length);
    return REMOTE_NAME.test(rest) ? { provider: "openai", name: rest } : null;
  }
  return null;
}

/** Human-readable reason a model name was rejected, listing the accepted forms. */
export function modelErrorMessage(model: string): string {
  return `Unknown model "${model.slice(0, 80)}". Accepted forms: ${ACCEPTED_MODEL_FORMS.join(", ")}`;
}
