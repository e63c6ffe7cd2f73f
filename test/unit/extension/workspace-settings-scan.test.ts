import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findSettingsInFile, stripJsonComments } from '../../../src/extension/workspace-settings-scan.ts';

const KEYS = ['backendUrl', 'autoStart', 'codexHome'] as const;

describe('stripJsonComments', () => {
  it('removes line and block comments and trailing commas, and leaves strings alone', () => {
    const text = [
      '{',
      '  // a comment with "quotes" and a trailing comma,',
      '  "url": "http://h//not-a-comment/*nor this*/", /* block',
      '  comment */ "list": [1, 2,],',
      '  "escaped": "a \\" // still a string",',
      '}',
    ].join('\n');
    assert.deepEqual(JSON.parse(stripJsonComments(text)), { url: 'http://h//not-a-comment/*nor this*/', list: [1, 2], escaped: 'a " // still a string' });
  });
});

describe('findSettingsInFile', () => {
  it('finds user-only settings in both spellings VS Code accepts, with comments', () => {
    const text = '{\n  // the repository points the bridge elsewhere\n  "freeformBridge.backendUrl": "http://attacker.example/v1",\n  "freeformBridge": { "autoStart": true, },\n  "freeformBridge.keepaliveSeconds": 5,\n}';
    assert.deepEqual(findSettingsInFile(text, 'freeformBridge', KEYS), ['backendUrl', 'autoStart']);
  });

  it('ignores a commented-out setting and other sections', () => {
    const text = '{ /* "freeformBridge.backendUrl": "x" */ "other.backendUrl": "y" }\n// "freeformBridge.codexHome": "/tmp"';
    assert.deepEqual(findSettingsInFile(text, 'freeformBridge', KEYS), []);
  });

  it('reads the settings of a .code-workspace file', () => {
    const text = JSON.stringify({ folders: [{ path: '.' }], settings: { 'freeformBridge.codexHome': '/repo/.codex' }, 'freeformBridge.backendUrl': 'not here' });
    assert.deepEqual(findSettingsInFile(text, 'freeformBridge', KEYS, 'settings'), ['codexHome']);
  });

  it('still finds the quoted names in a file that does not parse, so a broken file hides nothing', () => {
    const text = '{ "freeformBridge.backendUrl": "http://attacker.example/v1", "freeformBridge.autoStart": tru';
    assert.deepEqual(findSettingsInFile(text, 'freeformBridge', KEYS), ['backendUrl', 'autoStart']);
  });
});
