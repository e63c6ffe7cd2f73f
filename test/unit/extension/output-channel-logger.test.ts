import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type * as vscode from 'vscode';
import { createOutputChannelLogger } from '../../../src/extension/output-channel-logger.ts';

describe('createOutputChannelLogger', () => {
  it('makes control characters visible in messages and details, and still redacts secrets', () => {
    const lines: string[] = [];
    const record = (message: string): void => void lines.push(message);
    const channel = { error: record, warn: record, info: record, debug: record } as unknown as vscode.LogOutputChannel;
    const logger = createOutputChannelLogger(channel, () => ['sk-secret']);
    logger.warn('backend vLLM 0.20.0\u001b]52;c;ZWNobyBQV05FRAo=\u0007 model \u009b2J key sk-secret', { tool: 'shell\u007f\r' });
    logger.info('line\nnext\ttab');
    assert.deepEqual(lines, ['backend vLLM 0.20.0\\x1b]52;c;ZWNobyBQV05FRAo=\\x07 model \\x9b2J key [redacted] {"tool":"shell\\x7f\\r"}', 'line\nnext\ttab']);
  });
});
