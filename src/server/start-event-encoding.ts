import { createHash } from 'node:crypto';
import type { ChatRequestParts } from '../core/outbound/chat-request-parts.ts';
import { splitChatRequest } from '../core/outbound/outbound-encoding.ts';
import { SENT_REQUEST_PARTS, type ExchangeStartEvent, type TrafficEvent } from '../core/traffic/traffic-event.ts';

/*
 * The start event as it crosses from the bridge's worker thread to the extension host
 * (bridge-worker-protocol.ts). The lowered request travels as the parts the traffic panel keeps once
 * each (`splitChatRequest`): Codex resends the whole conversation on every turn, so consecutive
 * requests share almost all of them.
 *
 * The encoded form carries them across threads: the bridge's worker serialises and redacts each part
 * there, and sends one transferable buffer of UTF-8 bytes with a content hash per part, so the
 * extension host's thread neither walks 10 MB of objects nor parses them, and skips every part it
 * already holds by looking its hash up.
 */

/** Where one part of an encoded lowered request is in its buffer, and a hash of its (redacted) bytes. */
export interface EncodedFragment {
  hash: string;
  offset: number;
  length: number;
}

/** A lowered request cut into its head, messages and tool list (`splitChatRequest`), each part redacted and hashed. */
export interface EncodedRequestParts {
  /** Every part's UTF-8 bytes back to back; its buffer is the request's alone, so it can be transferred. */
  bytes: Uint8Array;
  head: EncodedFragment;
  messages: EncodedFragment[];
  tools: EncodedFragment | null;
}

/**
 * The start event as the bridge's worker thread hands it to the extension host: the lowered request
 * arrives serialised, redacted and hashed part by part instead of as objects, so receiving it costs
 * the host's thread a lookup per part, not a structured clone.
 */
export interface EncodedExchangeStartEvent extends Omit<ExchangeStartEvent, 'loweredRequest'> {
  encodedRequest: EncodedRequestParts;
}

/**
 * What the extension host hears from a bridge in a worker thread, its own or the one it follows in
 * another window: every event as the bridge reports it, but the start always encoded. The traffic
 * store takes this one form.
 */
export type BridgeTrafficEvent = Exclude<TrafficEvent, ExchangeStartEvent> | EncodedExchangeStartEvent;

export type BridgeTrafficListener = (event: BridgeTrafficEvent) => void;

/** 128 bits of SHA-256: collisions are out of reach even for text a model or a file chose. */
const HASH_CHARACTERS = 22;

/** `redactText` is applied to every part before it is encoded and hashed. */
export function encodeRequestParts(parts: ChatRequestParts, redactText: (text: string) => string): EncodedRequestParts {
  const texts = [parts.head, ...parts.messages, ...(parts.tools === null ? [] : [parts.tools])].map(redactText);
  const lengths = texts.map((text) => Buffer.byteLength(text, 'utf8'));
  const bytes = new Uint8Array(lengths.reduce((total, length) => total + length, 0));
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  const fragments = texts.map((text, index) => {
    const length = lengths[index] as number;
    view.write(text, offset, length, 'utf8');
    const hash = createHash('sha256').update(view.subarray(offset, offset + length)).digest('base64url').slice(0, HASH_CHARACTERS);
    const fragment: EncodedFragment = { hash, offset, length };
    offset += length;
    return fragment;
  });
  const [head, ...rest] = fragments as [EncodedFragment, ...EncodedFragment[]];
  const tools = parts.tools === null ? null : (rest.pop() ?? null);
  return { bytes, head, messages: rest, tools };
}

/**
 * A start event in the form the extension receives it (the bridge's worker thread encodes it so):
 * the lowered request encoded, from the parts the exchange sent upstream when it serialised the
 * request by parts. Only the parts are read then: the request as objects may be built on first read
 * (`encodeChatRequest`), so the other fields are copied key by key, where a rest pattern would
 * build it only to drop it.
 */
export function encodeStartEvent(event: ExchangeStartEvent, redactText: (text: string) => string): EncodedExchangeStartEvent {
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(event)) if (key !== 'loweredRequest') rest[key] = event[key as keyof ExchangeStartEvent];
  const parts = event[SENT_REQUEST_PARTS];
  const encodedRequest = encodeRequestParts(parts ?? splitChatRequest(event.loweredRequest), redactText);
  return { ...(rest as Omit<ExchangeStartEvent, 'loweredRequest'>), encodedRequest };
}

/** One part's text. */
export function decodeFragment(request: EncodedRequestParts, fragment: EncodedFragment): string {
  return Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength).toString('utf8', fragment.offset, fragment.offset + fragment.length);
}
