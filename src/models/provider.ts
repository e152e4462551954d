import { parseModel } from "./catalog";
import { localModel } from "./local";
import { openAiProvider } from "./openai";
import { ProviderError } from "./types";
import type { ModelProvider } from "./types";
import { workersAiProvider } from "./workers-ai";

export type {
  ChatTurn,
  GenerateRequest,
  ModelProvider,
  ProviderErrorKind,
  StreamEvent,
  ToolCall,
  ToolSpec,
  Usage,
} from "./types";
export { ProviderError } from "./types";

/**
 * The provider serving `model` (an agent's model string, see catalog.ts). An unparseable name is a
 * configuration error: agents are validated on write, so this only happens with corrupted data.
 */
export function providerFor(env: Env, model: string): ModelProvider {
  const parsed = parseModel(model);
  if (!parsed) throw new ProviderError("config", `Unknown model "${model.slice(0, 80)}"`);
  switch (parsed.provider) {
    case "local":
      return localModel;
    case "workers-ai":
      return workersAiProvider(env);
    case "openai":
      return openAiProvider(env);
  }
}
