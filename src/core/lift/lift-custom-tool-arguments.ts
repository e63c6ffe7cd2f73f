import { Buffer } from 'node:buffer';
import { findDuplicateTopLevelKeys, isPlainObject, parseJson } from '../parse-json.ts';
import { findMeaningfulSibling } from '../unwrap-payload.ts';
import { createWarning, type BridgeWarning, type WarningKind } from '../warnings.ts';

/*
 * Turns the `arguments` text of a bridged function call back into the free-form `input` of a
 * `custom_tool_call`. Byte forms differ per engine (spaced Python
 * dumps, compact Go/llama.cpp, ASCII-escaped gpt-oss, HTML-escaped Ollama), so the
 * text is always parsed and `input` re-extracted, never passed through.
 */

export type LiftedCustomInput =
  | { truncated: false; input: string; warnings: BridgeWarning[] }
  | { truncated: true; warnings: BridgeWarning[] };

export interface LiftCustomToolArgumentsContext {
  /** Bare tool name as Codex knows it. */
  tool: string;
  callId: string;
  finishReason: string | null;
}

/** The bridged function's single string parameter. */
export const CUSTOM_INPUT_PARAMETER = 'input';

/** Generous enough for large patches; above it the text is delivered raw instead of parsed. */
export const MAX_PARSED_ARGUMENTS_BYTES = 16 * 1024 * 1024;

export function liftCustomToolArguments(
  argumentsText: string,
  context: LiftCustomToolArgumentsContext,
): LiftedCustomInput {
  const warn = (kind: WarningKind, detail: string): BridgeWarning =>
    createWarning(kind, detail, { tool: context.tool, callId: context.callId, raw: argumentsText });
  const cutByLength = context.finishReason === 'length';

  if (exceedsParseLimit(argumentsText)) {
    // Not parsed, but a cut-off text must still never run; the prefix scan is linear and allocation-free.
    if (cutByLength) return truncated(warn, 'the arguments exceed the parse limit and the backend stopped for length');
    if (isUnterminatedJsonPrefix(argumentsText)) {
      return truncated(warn, 'the arguments exceed the parse limit and end inside an unfinished JSON value');
    }
    return {
      truncated: false,
      input: argumentsText,
      warnings: [
        warn(
          'not_json',
          `arguments larger than ${MAX_PARSED_ARGUMENTS_BYTES} bytes were not parsed; the raw text was delivered as input`,
        ),
      ],
    };
  }

  if (argumentsText.trim() === '') {
    // A call cut right after its name has no arguments yet: running it with "" would be a guess.
    if (cutByLength) return truncated(warn, 'the backend stopped for length before any arguments were written');
    return { truncated: false, input: '', warnings: [warn('empty_arguments', 'the arguments were empty; delivered an empty input')] };
  }

  const parsed = parseJson(argumentsText);
  if (!parsed.success) {
    if (cutByLength) return truncated(warn, 'the arguments do not parse and the backend stopped for length');
    if (isUnterminatedJsonPrefix(argumentsText)) {
      return truncated(warn, 'the arguments end inside an unfinished JSON value (vLLM reports tool_calls even when cut by length)');
    }
    const recovered = recoverLenientJson(argumentsText);
    if (recovered !== null) {
      // The streamed deltas already spelt this reading (stream/input-string-decoder.ts keeps raw
      // control characters and a backslash before a letter that is no JSON escape), so the final item
      // agrees with them.
      const repairedWarning = warn('grammar_repaired', `the arguments were not strict JSON; read them leniently: ${recovered.how}`);
      return liftFromObject(recovered.value, argumentsText, warn, [repairedWarning]);
    }
    return {
      truncated: false,
      input: argumentsText,
      warnings: [warn('not_json', 'the arguments are not JSON; the raw text was delivered as input')],
    };
  }

  const value = parsed.value;
  if (isPlainObject(value)) return liftFromObject(value, argumentsText, warn, []);

  if (typeof value === 'string') {
    const inner = parseJson(value);
    if (inner.success && isPlainObject(inner.value)) {
      // Unwrap exactly one level: the inner object goes through the object rules, nothing deeper is unwrapped.
      const unwrapped = warn('double_encoded', 'the arguments were a JSON string holding a JSON object; unwrapped one level');
      return liftFromObject(inner.value, value, warn, [unwrapped]);
    }
    return {
      truncated: false,
      input: value,
      warnings: [warn('not_object', 'the arguments were a JSON string literal instead of an object; delivered its value')],
    };
  }

  return {
    truncated: false,
    input: argumentsText,
    warnings: [
      warn('not_object', `the arguments were a JSON ${describeJsonType(value)} instead of an object; the raw text was delivered as input`),
    ],
  };
}

function liftFromObject(
  object: Record<string, unknown>,
  objectText: string,
  warn: (kind: WarningKind, detail: string) => BridgeWarning,
  warnings: BridgeWarning[],
): LiftedCustomInput {
  const keys = Object.keys(object);
  const payloadKey = Object.hasOwn(object, CUSTOM_INPUT_PARAMETER) ? CUSTOM_INPUT_PARAMETER : keys.length === 1 ? keys[0] : undefined;
  const sibling = payloadKey === undefined ? null : findMeaningfulSibling(object, payloadKey, findDuplicateTopLevelKeys(objectText));
  if (sibling !== null) {
    // Taking the payload out would drop what the other key says; Codex then tells the model what it got.
    warnings.push(warn('extra_keys', `the arguments were delivered as written, not unwrapped: ${sibling}`));
    return { truncated: false, input: objectText, warnings };
  }

  if (Object.hasOwn(object, CUSTOM_INPUT_PARAMETER)) {
    const payload = object[CUSTOM_INPUT_PARAMETER];
    const ignoredKeys = keys.filter((key) => key !== CUSTOM_INPUT_PARAMETER);
    let input: string;
    if (typeof payload === 'string') {
      input = payload;
    } else if (payload === null) {
      // Legacy Qwen XML parsers (vLLM qwen3_coder, SGLang, Ollama) turn the raw text `null` into JSON
      // null even for a string schema, so the model most likely wrote `null`.
      input = 'null';
      warnings.push(
        warn(
          'non_string_payload',
          'input was JSON null, which a legacy Qwen XML tool parser produces from the raw text "null" even for a string parameter; delivered the text "null"',
        ),
      );
    } else {
      input = JSON.stringify(payload);
      warnings.push(
        warn('non_string_payload', `input was a JSON ${describeJsonType(payload)} instead of a string; delivered its compact JSON text`),
      );
    }
    if (ignoredKeys.length > 0) {
      warnings.push(warn('extra_keys', `ignored extra argument keys next to input: ${ignoredKeys.map((key) => JSON.stringify(key)).join(', ')}`));
    }
    return { truncated: false, input, warnings };
  }

  if (keys.length === 0) {
    warnings.push(warn('missing_key', 'the arguments were an empty object; delivered an empty input'));
    return { truncated: false, input: '', warnings };
  }

  const onlyKey = keys.length === 1 ? keys[0] : undefined;
  const onlyValue = onlyKey === undefined ? undefined : object[onlyKey];
  if (onlyKey !== undefined && typeof onlyValue === 'string') {
    // The model renamed the parameter (often after the tool: "patch", "code"); its one string is the payload.
    warnings.push(warn('missing_key', `input was missing; delivered the only property ${JSON.stringify(onlyKey)} instead`));
    return { truncated: false, input: onlyValue, warnings };
  }

  warnings.push(
    warn(
      'missing_key',
      `input was missing and the properties ${keys.map((key) => JSON.stringify(key)).join(', ')} do not name a single payload; the raw arguments text was delivered as input`,
    ),
  );
  return { truncated: false, input: objectText, warnings };
}

const JSON_ESCAPE_LETTERS = '"\\/bfnrtu';

/**
 * `{"input": "…"}` with raw control characters inside strings or a backslash before a letter that is no
 * JSON escape (`\d` in a regular expression), read with both kept literally. Only an object that then
 * parses completely is returned: a cut value still does not parse and is refused as before.
 */
export function recoverLenientJson(text: string): { value: Record<string, unknown>; how: string } | null {
  let inString = false;
  let controls = 0;
  let escapes = 0;
  let repaired = '';
  let runStart = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (!inString) {
      if (code === 0x22) inString = true;
      continue;
    }
    if (code === 0x22) {
      inString = false;
    } else if (code === 0x5c) {
      const letter = text.charAt(index + 1);
      if (letter !== '' && JSON_ESCAPE_LETTERS.includes(letter) && !(letter === 'u' && !/^[0-9a-fA-F]{4}$/.test(text.slice(index + 2, index + 6)))) {
        index += 1;
        continue;
      }
      repaired += `${text.slice(runStart, index)}\\\\`;
      runStart = index + 1;
      escapes += 1;
    } else if (code < 0x20) {
      repaired += `${text.slice(runStart, index)}\\u${code.toString(16).padStart(4, '0')}`;
      runStart = index + 1;
      controls += 1;
    }
  }
  if (controls === 0 && escapes === 0) return null;
  const parsed = parseJson(repaired + text.slice(runStart));
  if (!parsed.success || !isPlainObject(parsed.value)) return null;
  const how: string[] = [];
  if (controls > 0) how.push(`kept ${controls} raw control character${controls === 1 ? '' : 's'} inside strings as written`);
  if (escapes > 0) how.push(`kept ${escapes} backslash${escapes === 1 ? '' : 'es'} before a letter that is no JSON escape as written`);
  return { value: parsed.value, how: how.join(' and ') };
}

function truncated(warn: (kind: WarningKind, detail: string) => BridgeWarning, why: string): LiftedCustomInput {
  return { truncated: true, warnings: [warn('truncated', `call not delivered: ${why}`)] };
}

function exceedsParseLimit(text: string): boolean {
  // A UTF-16 code unit is at most three UTF-8 bytes, so short texts skip the byte count.
  if (text.length * 3 <= MAX_PARSED_ARGUMENTS_BYTES) return false;
  return Buffer.byteLength(text, 'utf8') > MAX_PARSED_ARGUMENTS_BYTES;
}

function describeJsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

// ---------- unterminated JSON prefix ----------

type ScanState =
  | 'value'
  | 'valueOrArrayEnd'
  | 'keyOrObjectEnd'
  | 'key'
  | 'colon'
  | 'afterValue'
  | 'string'
  | 'escape'
  | 'unicodeEscape'
  | 'literal'
  | 'numberSign'
  | 'numberZero'
  | 'numberInteger'
  | 'numberDot'
  | 'numberFraction'
  | 'numberExponentMark'
  | 'numberExponentSign'
  | 'numberExponent';

const JSON_WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const HEX_DIGIT = /^[0-9a-fA-F]$/;
const DIGIT = /^[0-9]$/;

/**
 * True when `text` is a valid beginning of a JSON value that stops before the value is complete:
 * inside a string, an escape, a literal or a number, or with objects/arrays still open. Complete
 * JSON, empty text and text that breaks the grammar (raw newlines inside strings, trailing garbage)
 * give false. This is how truncation is recognised when the engine hides it (vLLM reports
 * `tool_calls` even when it stopped for length).
 */
export function isUnterminatedJsonPrefix(text: string): boolean {
  const containers: Array<'object' | 'array'> = [];
  let state: ScanState = 'value';
  let stringIsKey = false;
  let unicodeDigitsLeft = 0;
  let literalRest = '';
  let sawValueStart = false;

  for (let position = 0; position < text.length; position += 1) {
    const character = text.charAt(position);
    // A number ends at the first character that cannot continue it; that character is then read
    // again as whatever follows the value, hence the loop.
    let consumed = false;
    while (!consumed) {
      consumed = true;
      switch (state) {
        case 'value':
        case 'valueOrArrayEnd':
          if (JSON_WHITESPACE.has(character)) break;
          if (state === 'valueOrArrayEnd' && character === ']') {
            containers.pop();
            state = 'afterValue';
            break;
          }
          sawValueStart = true;
          if (character === '{') {
            containers.push('object');
            state = 'keyOrObjectEnd';
          } else if (character === '[') {
            containers.push('array');
            state = 'valueOrArrayEnd';
          } else if (character === '"') {
            stringIsKey = false;
            state = 'string';
          } else if (character === '-') {
            state = 'numberSign';
          } else if (character === '0') {
            state = 'numberZero';
          } else if (DIGIT.test(character)) {
            state = 'numberInteger';
          } else if (character === 't') {
            literalRest = 'rue';
            state = 'literal';
          } else if (character === 'f') {
            literalRest = 'alse';
            state = 'literal';
          } else if (character === 'n') {
            literalRest = 'ull';
            state = 'literal';
          } else {
            return false;
          }
          break;
        case 'keyOrObjectEnd':
        case 'key':
          if (JSON_WHITESPACE.has(character)) break;
          if (state === 'keyOrObjectEnd' && character === '}') {
            containers.pop();
            state = 'afterValue';
            break;
          }
          if (character !== '"') return false;
          stringIsKey = true;
          state = 'string';
          break;
        case 'colon':
          if (JSON_WHITESPACE.has(character)) break;
          if (character !== ':') return false;
          state = 'value';
          break;
        case 'afterValue': {
          if (JSON_WHITESPACE.has(character)) break;
          const container = containers[containers.length - 1];
          if (container === undefined) return false;
          if (character === ',') {
            state = container === 'object' ? 'key' : 'value';
          } else if ((character === '}' && container === 'object') || (character === ']' && container === 'array')) {
            containers.pop();
            state = 'afterValue';
          } else {
            return false;
          }
          break;
        }
        case 'string':
          if (character === '"') {
            if (stringIsKey) state = 'colon';
            else state = 'afterValue';
          } else if (character === '\\') {
            state = 'escape';
          } else if (character < ' ') {
            // JSON forbids raw control characters in strings: small models writing raw newlines
            // produce "not JSON", not a cut-off value.
            return false;
          }
          break;
        case 'escape':
          if (character === 'u') {
            unicodeDigitsLeft = 4;
            state = 'unicodeEscape';
          } else if ('"\\/bfnrt'.includes(character)) {
            state = 'string';
          } else {
            return false;
          }
          break;
        case 'unicodeEscape':
          if (!HEX_DIGIT.test(character)) return false;
          unicodeDigitsLeft -= 1;
          if (unicodeDigitsLeft === 0) state = 'string';
          break;
        case 'literal':
          if (character !== literalRest.charAt(0)) return false;
          literalRest = literalRest.slice(1);
          if (literalRest === '') state = 'afterValue';
          break;
        case 'numberSign':
          if (character === '0') state = 'numberZero';
          else if (DIGIT.test(character)) state = 'numberInteger';
          else return false;
          break;
        case 'numberZero':
        case 'numberInteger':
          if (state === 'numberInteger' && DIGIT.test(character)) break;
          if (character === '.') state = 'numberDot';
          else if (character === 'e' || character === 'E') state = 'numberExponentMark';
          else {
            state = 'afterValue';
            consumed = false;
          }
          break;
        case 'numberDot':
          if (!DIGIT.test(character)) return false;
          state = 'numberFraction';
          break;
        case 'numberFraction':
          if (DIGIT.test(character)) break;
          if (character === 'e' || character === 'E') state = 'numberExponentMark';
          else {
            state = 'afterValue';
            consumed = false;
          }
          break;
        case 'numberExponentMark':
          if (character === '+' || character === '-') state = 'numberExponentSign';
          else if (DIGIT.test(character)) state = 'numberExponent';
          else return false;
          break;
        case 'numberExponentSign':
          if (!DIGIT.test(character)) return false;
          state = 'numberExponent';
          break;
        case 'numberExponent':
          if (DIGIT.test(character)) break;
          state = 'afterValue';
          consumed = false;
          break;
        default: {
          const unreachable: never = state;
          return unreachable;
        }
      }
    }
  }

  if (!sawValueStart) return false;
  // A finished top-level value (a number that could go on still counts as finished) is complete JSON.
  const complete =
    containers.length === 0 &&
    (state === 'afterValue' ||
      state === 'numberZero' ||
      state === 'numberInteger' ||
      state === 'numberFraction' ||
      state === 'numberExponent');
  return !complete;
}
