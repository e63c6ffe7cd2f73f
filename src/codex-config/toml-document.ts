import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml, TomlDate, TomlError } from 'smol-toml';
import { applyTomlEditsToData, editTomlText, type TomlEdit } from '../core/codex-config/toml-edit.ts';
import { InvalidRequestError } from '../core/errors.ts';
import { CodexConfigFileError } from './codex-config-file-error.ts';

/**
 * TOML files checked with a real parser (smol-toml): a malformed file is refused, and every edited
 * text must parse to the original document plus exactly the edits, or nothing is written.
 */

/** Parsed TOML as plain data: tables as plain objects, dates and big integers as tagged objects. */
function toPlainTomlData(value: unknown): unknown {
  if (value instanceof TomlDate) return { tomlDate: value.toISOString() };
  if (typeof value === 'bigint') return { tomlBigInteger: value.toString() };
  if (Array.isArray(value)) return value.map(toPlainTomlData);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, toPlainTomlData(item)]));
  }
  return value;
}

export function parseTomlText(text: string): Record<string, unknown> {
  return toPlainTomlData(parseToml(text, { integersAsBigInt: 'asNeeded' })) as Record<string, unknown>;
}

export function parseTomlFile(path: string, text: string): Record<string, unknown> {
  try {
    return parseTomlText(text);
  } catch (error) {
    const detail = error instanceof TomlError ? `line ${error.line}, column ${error.column}: ${error.message}` : String(error);
    throw new CodexConfigFileError(
      'malformed',
      path,
      `${path} is not valid TOML (${detail.trimEnd()})\nIt was left untouched. Fix it (Codex cannot load it either) or move it away, then run again.`,
      { cause: error },
    );
  }
}

/**
 * Applies the edits and proves they did nothing else: the result must parse to the original document
 * plus exactly the edits. The text scanner is simpler than a TOML parser, so this is the safety net.
 */
export function editTomlFile(path: string, text: string, edits: readonly TomlEdit[], manualHint: string): string {
  const refuse = (reason: string, cause?: unknown): never => {
    throw new CodexConfigFileError(
      'unsafe-edit',
      path,
      `cannot update ${path} without disturbing the rest of it (${reason}); it was left untouched. Add these settings by hand:\n${manualHint}`,
      { cause },
    );
  };
  let edited = '';
  try {
    edited = editTomlText(text, edits);
  } catch (error) {
    if (InvalidRequestError.is(error)) refuse(error.message, error);
    throw error;
  }
  const expected = applyTomlEditsToData(parseTomlText(text), edits);
  let actual: Record<string, unknown> | null = null;
  try {
    actual = parseTomlText(edited);
  } catch (error) {
    refuse(`the edited text would not be valid TOML: ${(error as Error).message.split('\n')[0]}`, error);
  }
  if (!isDeepStrictEqual(actual, expected)) refuse('the edit would change other settings');
  return edited;
}

export function readPath(data: Record<string, unknown> | null, path: readonly string[]): unknown {
  let current: unknown = data;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}
