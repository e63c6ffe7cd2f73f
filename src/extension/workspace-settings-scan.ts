import { isPlainObject, parseJson } from '../core/parse-json.ts';

/*
 * Reads a workspace's settings files for settings it may not set. VS Code itself drops a workspace
 * value of an `application` setting without a word to the extension, so the only way to tell the
 * user that their repository tried is to read the files. Pure (no vscode import), so it is unit-tested.
 */

/** Index just past the string literal that starts at `start` (a `"`), or the text's end when unclosed. */
function skipString(text: string, start: number): number {
  let index = start + 1;
  while (index < text.length && text[index] !== '"') index += text[index] === '\\' ? 2 : 1;
  return Math.min(index + 1, text.length);
}

/**
 * The text with comments removed and trailing commas dropped: VS Code's settings files are JSON with
 * comments, and VS Code accepts a comma before `}` or `]`. Strings are copied untouched.
 */
export function stripJsonComments(text: string): string {
  let withoutComments = '';
  let index = 0;
  while (index < text.length) {
    if (text[index] === '"') {
      const end = skipString(text, index);
      withoutComments += text.slice(index, end);
      index = end;
    } else if (text.startsWith('//', index)) {
      const end = text.indexOf('\n', index);
      index = end === -1 ? text.length : end;
    } else if (text.startsWith('/*', index)) {
      const end = text.indexOf('*/', index + 2);
      index = end === -1 ? text.length : end + 2;
      // A comment separates tokens: keep that.
      withoutComments += ' ';
    } else {
      withoutComments += text[index];
      index += 1;
    }
  }
  let result = '';
  const closingAhead = /\s*[}\]]/y;
  index = 0;
  while (index < withoutComments.length) {
    const character = withoutComments[index];
    if (character === '"') {
      const end = skipString(withoutComments, index);
      result += withoutComments.slice(index, end);
      index = end;
      continue;
    }
    closingAhead.lastIndex = index + 1;
    if (character === ',' && closingAhead.test(withoutComments)) {
      index += 1;
      continue;
    }
    result += character;
    index += 1;
  }
  return result;
}

/**
 * Which of `keys` (within `section`) a settings file sets, in either spelling VS Code accepts:
 * `"section.key": …` or `"section": { "key": … }`. `settingsProperty` names the object holding the
 * settings (`settings` in a `.code-workspace` file); absent, the top level. A file that does not
 * parse is searched for the quoted names instead, so a broken file cannot hide an attempt.
 */
export function findSettingsInFile<Key extends string>(text: string, section: string, keys: readonly Key[], settingsProperty?: string): Key[] {
  const stripped = stripJsonComments(text);
  const parsed = parseJson(stripped);
  if (!parsed.success || !isPlainObject(parsed.value)) {
    return keys.filter((key) => stripped.includes(`"${section}.${key}"`));
  }
  const holder = settingsProperty === undefined ? parsed.value : parsed.value[settingsProperty];
  if (!isPlainObject(holder)) return [];
  const nested = holder[section];
  return keys.filter((key) => Object.hasOwn(holder, `${section}.${key}`) || (isPlainObject(nested) && Object.hasOwn(nested, key)));
}
