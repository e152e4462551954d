/**
 * The provider-neutral vocabulary of the model layer. Kept apart from provider.ts (which picks an
 * implementation) so that implementations can import it without an import cycle.
 */

export type ToolCall = { id: string; name: string; arguments: Record<string, unknown> };

export type ChatTurn =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string };

/** A tool offered to the model; `parameters` is a JSON Schema object. */
export type ToolSpec = { name: string; description: string; parameters: Record<string, unknown> };

export type Usage = { inputTokens: number; outputTokens: number };

export type StreamEvent =
  | { type: "text"; delta: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "done"; usage: Usage };

export type GenerateRequest = {
  model: string;
  messages: ChatTurn[];
  tools?: ToolSpec[];
  temperature: number;
  signal?: AbortSignal;
};

export interface ModelProvider {
  generate(req: GenerateRequest): AsyncIterable<StreamEvent>;
}

export type ProviderErrorKind = "timeout" | "upstream" | "malformed" | "config";

/**
 * A model provider failed. The message is safe to log but is NOT meant for clients: the chat layer
 * maps the kind to 504 (timeout) or 502 (others) with its own wording.
 */
export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  constructor(kind: ProviderErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ProviderError";
    this.kind = kind;
  }
}
