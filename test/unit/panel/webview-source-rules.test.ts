import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

/*
 * Rules the webview code keeps by construction (issue #5 hardening), checked on its source: a payload
 * is attacker-controlled model output and must only ever become text.
 */

const MEDIA = 'media';
const sources = readdirSync(MEDIA)
  .filter((name) => name.endsWith('.ts'))
  .map((name) => ({ name, text: readFileSync(join(MEDIA, name), 'utf8') }));

describe('webview source rules', () => {
  it('finds the panel sources', () => {
    assert.deepEqual(sources.map((source) => source.name).sort(), ['traffic-panel-state.ts', 'traffic-panel.ts']);
  });

  it('never parses markup: no innerHTML, outerHTML, insertAdjacentHTML, document.write, eval or Function', () => {
    for (const { name, text } of sources) {
      assert.doesNotMatch(text, /\.(innerHTML|outerHTML)\b|insertAdjacentHTML|document\.write|\beval\(|new Function\(|DOMParser|createContextualFragment/, name);
    }
  });

  it('never sets an attribute that loads or runs something (src, href, style, on…)', () => {
    for (const { name, text } of sources) {
      assert.doesNotMatch(text, /setAttribute\(\s*['"](src|href|style|on[a-z]+)['"]/i, name);
      assert.doesNotMatch(text, /\battributes:\s*\{[^}]*\b(src|href|style|on[a-z]+)\s*:/i, name);
    }
  });

  it('imports the protocol as types only, so the host-side zod schemas never reach the browser bundle', () => {
    for (const { name, text } of sources) {
      for (const statement of text.match(/import[^;]*from '[^']*webview-protocol\.ts';/g) ?? []) assert.match(statement, /^import type /, `${name}: ${statement}`);
    }
  });
});
