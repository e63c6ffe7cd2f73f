import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { REPOSITORY_ROOT } from '../support/repository-files.ts';
import {
  DEFAULT_BACKEND_URL,
  DEFAULT_CODEX_PROFILE,
  DEFAULT_KEEPALIVE_SECONDS,
  DEFAULT_RECOVER_TEXT_TOOL_CALLS,
  DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS,
  DEFAULT_TRAFFIC_BUFFER_SIZE,
  MAX_KEEPALIVE_SECONDS,
  MAX_UPSTREAM_IDLE_TIMEOUT_SECONDS,
  MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS,
  MAX_TRAFFIC_BUFFER_SIZE,
  MIN_TRAFFIC_BUFFER_SIZE,
} from '../../src/core/defaults.ts';

/**
 * VS Code shows the defaults package.json contributes; the bridge, the CLI and the extension use
 * src/core/defaults.ts. Read from the file itself (not the bundled copy) so an edit to either side
 * that forgets the other fails here.
 */
const repositoryRoot = REPOSITORY_ROOT;

interface ContributedSetting {
  default?: unknown;
  minimum?: number;
  maximum?: number;
}

function contributedSettings(): Record<string, ContributedSetting> {
  const manifest = JSON.parse(readFileSync(resolve(repositoryRoot, 'package.json'), 'utf8')) as { contributes: { configuration: { properties: Record<string, ContributedSetting> } } };
  return manifest.contributes.configuration.properties;
}

describe("package.json's setting defaults equal src/core/defaults.ts", () => {
  const settings = contributedSettings();

  it('backend URL and profile name', () => {
    assert.equal(settings['freeformBridge.backendUrl']?.default, DEFAULT_BACKEND_URL);
    assert.equal(settings['freeformBridge.codexProfile']?.default, DEFAULT_CODEX_PROFILE);
  });

  it('backend timeout seconds, with its bounds', () => {
    assert.equal(settings['freeformBridge.backendTimeoutSeconds']?.default, DEFAULT_UPSTREAM_IDLE_TIMEOUT_SECONDS);
    assert.equal(settings['freeformBridge.backendTimeoutSeconds']?.minimum, MIN_UPSTREAM_IDLE_TIMEOUT_SECONDS);
    assert.equal(settings['freeformBridge.backendTimeoutSeconds']?.maximum, MAX_UPSTREAM_IDLE_TIMEOUT_SECONDS);
  });

  it('keepalive seconds, with its upper bound', () => {
    assert.equal(settings['freeformBridge.keepaliveSeconds']?.default, DEFAULT_KEEPALIVE_SECONDS);
    assert.equal(settings['freeformBridge.keepaliveSeconds']?.minimum, 0);
    assert.equal(settings['freeformBridge.keepaliveSeconds']?.maximum, MAX_KEEPALIVE_SECONDS);
  });

  it('recovering tool calls left as text', () => {
    assert.equal(settings['freeformBridge.recoverTextToolCalls']?.default, DEFAULT_RECOVER_TEXT_TOOL_CALLS);
  });

  it('traffic buffer size, with its bounds', () => {
    assert.equal(settings['freeformBridge.trafficBufferSize']?.default, DEFAULT_TRAFFIC_BUFFER_SIZE);
    assert.equal(settings['freeformBridge.trafficBufferSize']?.minimum, MIN_TRAFFIC_BUFFER_SIZE);
    assert.equal(settings['freeformBridge.trafficBufferSize']?.maximum, MAX_TRAFFIC_BUFFER_SIZE);
  });
});
