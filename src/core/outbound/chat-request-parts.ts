/**
 * A lowered request as the JSON text of its parts (`splitChatRequest` in outbound-encoding.ts): the
 * head (the request with `messages` and `tools` emptied, in the request's key order), every message,
 * and the tool list. A type of its own so that the traffic event, which the webview's protocol
 * names, can carry the parts without the encoder.
 */
export interface ChatRequestParts {
  head: string;
  messages: string[];
  tools: string | null;
}
