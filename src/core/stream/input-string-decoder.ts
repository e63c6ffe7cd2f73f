/**
 * Progressive decoder for the bridged function's JSON arguments `{"input":"…"}`: it turns raw argument fragments into `response.custom_tool_call_input.delta` text while the
 * call is still streaming. It only ever reads the value of a leading `input` key; anything else
 * (another first key, a non-string value) stops the deltas and leaves the decision to the final lift,
 * which may deliver something else and then records `input_delta_mismatch`.
 *
 * Engines cut fragments anywhere: llama.cpp inside escapes and words, legacy
 * qwen3_coder/SGLang as `{` + whole member + `}`, Ollama as one fragment. So every step here can stop
 * mid-token and resume on the next `push`.
 */

export type InputStringDecoderState = 'seeking' | 'in_value' | 'done' | 'abandoned';

/** Finer than the public state: where in `{ "input" : "` the decoder is. */
type Phase = 'before_object' | 'before_key' | 'in_key' | 'after_key' | 'before_value' | 'in_value' | 'done' | 'abandoned';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** `\u0069\u006e\u0070\u0075\u0074` is the longest spelling of `input`; a longer raw key is another key. */
const MAX_RAW_INPUT_KEY_LENGTH = 30;

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

const HEX_PREFIX = /^[0-9a-fA-F]*$/;
const HEX_FOUR = /^[0-9a-fA-F]{4}$/;

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

export class InputStringDecoder {
  private phase: Phase = 'before_object';
  /** Raw text of the first key read so far (without quotes, escapes undecoded). */
  private rawKey = '';
  private keyEscapePending = false;
  /** An escape cut by the end of a fragment (`\`, `\u00`), completed by the next fragment. */
  private heldEscape = '';
  /** A high surrogate waiting for its low half, so a delta never ends in half a character. */
  private heldHighSurrogate = '';
  /** Per instance: a global regex carries `lastIndex` state. */
  private readonly specialCharacter = /["\\]/g;
  private emitted = '';

  get state(): InputStringDecoderState {
    const phase = this.phase;
    return phase === 'in_value' || phase === 'done' || phase === 'abandoned' ? phase : 'seeking';
  }

  /** Everything returned by `push` so far. */
  get decoded(): string {
    return this.emitted;
  }

  /** Feeds the next raw `arguments` fragment; returns the newly decoded part of the `input` value. */
  push(fragment: string): string {
    if (this.phase === 'done' || this.phase === 'abandoned') return '';
    let position = 0;
    if (this.phase !== 'in_value') {
      position = this.seekValue(fragment);
      if (position === -1) return '';
    }
    let text = position === 0 ? fragment : fragment.slice(position);
    if (this.heldEscape.length > 0) {
      text = this.heldEscape + text;
      this.heldEscape = '';
    }
    const output = this.decodeValue(text);
    if (output.length > 0) this.emitted += output;
    return output;
  }

  /**
   * Walks `{`, the first key, `:` and the opening quote. Returns the position just after the opening
   * quote, or -1 while the value has not started (or never will: abandoned).
   */
  private seekValue(text: string): number {
    for (let index = 0; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      switch (this.phase) {
        case 'before_object':
          if (isJsonWhitespace(code)) break;
          if (code === 0x7b /* { */) this.phase = 'before_key';
          else return this.abandon();
          break;
        case 'before_key':
          if (isJsonWhitespace(code)) break;
          if (code === QUOTE) this.phase = 'in_key';
          else return this.abandon();
          break;
        case 'in_key': {
          const keyEnd = this.findKeyEnd(text, index);
          if (keyEnd === -1) {
            this.rawKey += text.slice(index);
            if (this.rawKey.length > MAX_RAW_INPUT_KEY_LENGTH) return this.abandon();
            return -1;
          }
          this.rawKey += text.slice(index, keyEnd);
          if (!this.isInputKey()) return this.abandon();
          this.phase = 'after_key';
          index = keyEnd;
          break;
        }
        case 'after_key':
          if (isJsonWhitespace(code)) break;
          if (code === 0x3a /* : */) this.phase = 'before_value';
          else return this.abandon();
          break;
        case 'before_value':
          if (isJsonWhitespace(code)) break;
          if (code !== QUOTE) return this.abandon();
          this.phase = 'in_value';
          return index + 1;
        default:
          return -1;
      }
    }
    return -1;
  }

  /** Index of the key's closing quote in `text` from `start`, or -1; tracks escapes across fragments. */
  private findKeyEnd(text: string, start: number): number {
    for (let index = start; index < text.length; index += 1) {
      const code = text.charCodeAt(index);
      if (this.keyEscapePending) this.keyEscapePending = false;
      else if (code === BACKSLASH) this.keyEscapePending = true;
      else if (code === QUOTE) return index;
    }
    return -1;
  }

  private isInputKey(): boolean {
    if (this.rawKey === 'input') return true;
    if (this.rawKey.length > MAX_RAW_INPUT_KEY_LENGTH || !this.rawKey.includes('\\')) return false;
    // Escaped spellings (`\u0069nput`) are legal JSON; decode them exactly as JSON.parse would.
    const decoded = decodeJsonStringBody(this.rawKey);
    return decoded === 'input';
  }

  private abandon(): -1 {
    this.phase = 'abandoned';
    this.rawKey = '';
    return -1;
  }

  /** Decodes string-body text up to an unescaped quote; copies unescaped runs by slicing. */
  private decodeValue(text: string): string {
    let output = this.heldHighSurrogate;
    this.heldHighSurrogate = '';
    const length = text.length;
    const special = this.specialCharacter;
    let position = 0;
    while (position < length) {
      special.lastIndex = position;
      const match = special.exec(text);
      if (match === null) {
        output += position === 0 ? text : text.slice(position);
        break;
      }
      const index = match.index;
      if (index > position) output += text.slice(position, index);
      if (text.charCodeAt(index) === QUOTE) {
        this.phase = 'done';
        return output;
      }
      if (index + 1 >= length) {
        this.heldEscape = '\\';
        position = length;
        break;
      }
      const escapeLetter = text[index + 1] as string;
      const simple = SIMPLE_ESCAPES[escapeLetter];
      if (simple !== undefined) {
        output += simple;
        position = index + 2;
        continue;
      }
      if (escapeLetter === 'u') {
        const hex = text.slice(index + 2, index + 6);
        if (hex.length < 4 && HEX_PREFIX.test(hex)) {
          this.heldEscape = text.slice(index);
          position = length;
          break;
        }
        if (HEX_FOUR.test(hex)) {
          output += String.fromCharCode(Number.parseInt(hex, 16));
          position = index + 6;
          continue;
        }
      }
      // Not a JSON escape: the arguments are malformed and the final lift decides; pass the
      // backslash through as written rather than guess.
      output += '\\';
      position = index + 1;
    }
    if (output.length > 0 && isHighSurrogate(output.charCodeAt(output.length - 1))) {
      this.heldHighSurrogate = output.slice(-1);
      output = output.slice(0, -1);
    }
    return output;
  }
}

/** Decodes a complete JSON string body (no quotes). Only used for the short first key. */
function decodeJsonStringBody(raw: string): string | null {
  let output = '';
  for (let index = 0; index < raw.length; index += 1) {
    const character = raw[index] as string;
    if (character !== '\\') {
      output += character;
      continue;
    }
    const letter = raw[index + 1];
    if (letter === undefined) return null;
    const simple = SIMPLE_ESCAPES[letter];
    if (simple !== undefined) {
      output += simple;
      index += 1;
      continue;
    }
    if (letter !== 'u') return null;
    const hex = raw.slice(index + 2, index + 6);
    if (!HEX_FOUR.test(hex)) return null;
    output += String.fromCharCode(Number.parseInt(hex, 16));
    index += 5;
  }
  return output;
}
