import { isPlainObject, parseJson } from '../parse-json.ts';

/*
 * What one round trip is for Codex, read from the `x-codex-turn-metadata` request header (JSON):
 * `request_kind` (`turn` or `compaction`), `thread_source` (`user` or `subagent`) and `agent_name`
 * (`/root`, `/root/<task>`). The webview reads the types through the traffic protocol.
 */

/**
 * `compaction`: Codex asks the model to summarise the history (no tools). `subagent`: a turn of an
 * agent another agent spawned. `turn`: a turn of the user's own thread. `unlabelled`: the request
 * carried no readable header (a client other than Codex, or an older Codex).
 */
export type RoundTripKind = 'turn' | 'compaction' | 'subagent' | 'unlabelled';

export interface RoundTripLabel {
  kind: RoundTripKind;
  /** The sub-agent's (or the root agent's) path as Codex names it; null when the header has none. */
  agentName: string | null;
  /** Short words for the list and the log: `turn`, `compaction`, `sub-agent /root/calc`, `sub-agent /root/calc compaction`. */
  text: string;
}

export const UNLABELLED_ROUND_TRIP: RoundTripLabel = Object.freeze({ kind: 'unlabelled', agentName: null, text: 'unlabelled' });

function readString(record: Record<string, unknown>, key: string): string | null {
  const value = record[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * Multi-agent v2 names each agent by its task path (`/root/calc`); v1 gives every agent the root's
 * name, so there the end of the child's thread id tells two sub-agents apart.
 */
function describeSubagent(agentName: string | null, threadId: string | null): string {
  if (agentName !== null && agentName !== '/root') return agentName;
  const thread = threadId === null ? '' : `thread …${threadId.slice(-8)}`;
  return [agentName ?? '', thread].filter((part) => part !== '').join(', ') || '(unnamed)';
}

/**
 * Labels a round trip from the header value. Never throws: a missing or unreadable header is an
 * `unlabelled` round trip, not an error (the header is informational; the request is served as is).
 */
export function labelRoundTrip(header: string | readonly string[] | undefined): RoundTripLabel {
  const text = typeof header === 'string' ? header : header?.[0];
  if (text === undefined || text.trim() === '') return UNLABELLED_ROUND_TRIP;
  const parsed = parseJson(text);
  if (!parsed.success || !isPlainObject(parsed.value)) return UNLABELLED_ROUND_TRIP;
  const record = parsed.value;
  const requestKind = readString(record, 'request_kind');
  const subagent = readString(record, 'thread_source') === 'subagent';
  const agentName = readString(record, 'agent_name');
  const compaction = requestKind === 'compaction';
  if (!compaction && !subagent && requestKind === null) return { ...UNLABELLED_ROUND_TRIP, agentName };
  const kind: RoundTripKind = compaction ? 'compaction' : subagent ? 'subagent' : 'turn';
  const words = [subagent ? `sub-agent ${describeSubagent(agentName, readString(record, 'thread_id'))}` : '', compaction ? 'compaction' : '', !compaction && !subagent ? (requestKind ?? 'turn') : '']
    .filter((word) => word !== '')
    .join(' ');
  return { kind, agentName, text: words };
}
