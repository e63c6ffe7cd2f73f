/** What the extension-host delay test and its load worker (host-load-worker.ts) say to each other. */

export const LOAD_ANSWER = 'done';

export type LoadScenario = 'session' | 'streaming';

export interface LoadRequest {
  type: 'run';
  scenario: LoadScenario;
  url: string;
  token: string;
}

/** What the client saw of one exchange. */
export interface ExchangeResult {
  httpStatus: number;
  requestBytes: number;
  /** The type of the stream's last event (`response.completed` when the turn finished). */
  terminalEvent: string | null;
  responseStatus: string | null;
  text: string;
  /** Deltas the backend streamed for this answer, so the test knows the text to expect. */
  deltas: number;
}

export type LoadReply =
  | { type: 'ready'; backendUrl: string }
  | { type: 'done'; scenario: LoadScenario; exchanges: ExchangeResult[] }
  | { type: 'error'; message: string };

export const SESSION_TURNS = 3;
export const STREAMING_SESSIONS = 8;
/** Deltas per streamed answer, about one per millisecond, as a model streams a long reply. */
export const SESSION_DELTAS = 200;
export const STREAMING_DELTAS = 1_000;
