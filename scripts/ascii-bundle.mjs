// Used by scripts/build.mjs and by every test and bench step that bundles the bridge the way it does.
import { readFileSync, writeFileSync } from 'node:fs';

const NON_ASCII = /[\u0080-\uffff]/g;

/**
 * Every character outside ASCII as a `\uXXXX` escape (UTF-16 units, so a character beyond the BMP
 * becomes its surrogate pair). esbuild writes code as ASCII but copies comments as they are, and a
 * single non-ASCII character makes V8 hold the whole source as a two-byte string for the life of the
 * process: 5.6 MB for the 2.8 MB of dist/cli.js. In a comment the escape is plain text; in a string, a
 * template, a regular expression or an identifier it stands for the same character.
 *
 * @param {string} text
 * @returns {string}
 */
export function escapeNonAscii(text) {
  return text.replace(NON_ASCII, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Rewrites a bundle on disk as ASCII, when it is not already.
 *
 * @param {string} path
 */
export function makeBundleAscii(path) {
  const text = readFileSync(path, 'utf8');
  const escaped = escapeNonAscii(text);
  if (escaped !== text) writeFileSync(path, escaped);
}
