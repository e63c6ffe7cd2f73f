import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import type { ChatContentPart } from '../../../src/core/chat/chat-completions-api.ts';
import { parseJson } from '../../../src/core/parse-json.ts';
import type { MockTurn, RecordedRequest } from '../../../mock-backend/create-mock-backend.ts';
import {
  chatMessages,
  chatRequests,
  codexSuiteTitle,
  describeRun,
  replayedCalls,
  startE2eSession,
  trafficWarnings,
  unexpectedWarnings,
  type E2eSession,
} from '../../../harness/codex-session.ts';

/**
 * `view_image` with the real Codex: the model asks for a PNG in the workspace, Codex reads it and
 * sends it back as an `input_image` in the tool output, and the image reaches the backend as an
 * `image_url` part: in the user message right after the tool message (Chat templates keep tool
 * messages text-only), which names the call. With `image_detail_original` Codex asks for detail
 * `original`, which Chat does not know: it arrives as `high`.
 */

/** A 1×1 PNG. */
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const FINAL = 'The image is a single dot.';

function scriptViewImage(session: E2eSession, imagePath: string): void {
  session.backend.setResponder((request): MockTurn => {
    if (replayedCalls(request).some((call) => call.id === 'call_view')) return { text: FINAL };
    return { toolCalls: [{ id: 'call_view', name: 'view_image', arguments: { path: imagePath } }] };
  });
}

/** The tool message of the call, and the image parts of the message after it. */
function deliveredImage(request: RecordedRequest): { toolText: unknown; images: ChatContentPart[]; caption: string | null } {
  const messages = chatMessages(request);
  const toolIndex = messages.findIndex((message) => message.role === 'tool' && message.tool_call_id === 'call_view');
  assert.notEqual(toolIndex, -1, 'the tool message of view_image is replayed');
  const next = messages[toolIndex + 1];
  assert.equal(next?.role, 'user', 'the image follows the tool message');
  const parts = Array.isArray(next.content) ? next.content : [];
  const first = parts[0];
  return {
    toolText: messages[toolIndex]?.content,
    images: parts.filter((part) => part.type === 'image_url'),
    caption: first?.type === 'text' ? first.text : null,
  };
}

describe(codexSuiteTitle('view_image'), { timeout: 180_000 }, () => {
  it('the PNG reaches the backend as an image_url part of the tool result, byte for byte', async () => {
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'functions' });
    try {
      const imagePath = join(session.workspace, 'dot.png');
      writeFileSync(imagePath, Buffer.from(PNG_BASE64, 'base64'));
      scriptViewImage(session, imagePath);
      const run = await session.runCodex('What is in dot.png? Look at it.', { timeoutMs: 150_000 });
      assert.equal(run.code, 0, describeRun(run));
      assert.deepEqual(run.agentMessages, [FINAL], describeRun(run));

      const requests = chatRequests(session.backend);
      assert.equal(requests.length, 2);
      const delivered = deliveredImage(requests[1] as RecordedRequest);
      assert.equal(delivered.toolText, '[image 1 of this tool result is attached in the next message]');
      assert.equal(delivered.caption, 'Image output of tool call call_view:');
      assert.deepEqual(delivered.images, [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'high' } }]);
      assert.deepEqual(unexpectedWarnings(session.traffic), []);
    } finally {
      await session.close();
    }
  });

  it("detail 'original' (feature image_detail_original) arrives as 'high', with a warning", async () => {
    const session = await startE2eSession({ profile: 'vllm-hermes', surface: 'freeform' });
    try {
      // Codex offers view_image only to a model whose metadata lists image input, and asks for
      // original detail only when the metadata says it supports it; the catalog the bridge writes
      // claims neither (it cannot know the model sees images), so this test's copy turns both on.
      const catalogName = readdirSync(session.codexHome).find((name) => name.endsWith('.model_catalog.json'));
      assert.ok(catalogName, 'the freeform surface writes a model catalog');
      const catalogPath = join(session.codexHome, catalogName);
      const parsed = parseJson(readFileSync(catalogPath, 'utf8'));
      assert.ok(parsed.success);
      const catalog = z.looseObject({ models: z.array(z.record(z.string(), z.unknown())) }).parse(parsed.value);
      for (const model of catalog.models) Object.assign(model, { input_modalities: ['text', 'image'], supports_image_detail_original: true });
      writeFileSync(catalogPath, JSON.stringify(catalog, null, 2));

      const imagePath = join(session.workspace, 'dot.png');
      writeFileSync(imagePath, Buffer.from(PNG_BASE64, 'base64'));
      scriptViewImage(session, imagePath);
      const run = await session.runCodex('What is in dot.png? Look at it.', { extraArguments: ['--enable', 'image_detail_original'], timeoutMs: 150_000 });
      assert.equal(run.code, 0, describeRun(run));
      assert.deepEqual(run.agentMessages, [FINAL], describeRun(run));

      const requests = chatRequests(session.backend);
      assert.equal(requests.length, 2);
      assert.deepEqual(deliveredImage(requests[1] as RecordedRequest).images, [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'high' } }]);
      const changed = trafficWarnings(session.traffic).filter((warning) => warning.kind === 'image_detail_changed');
      assert.equal(changed.length, 1, 'Codex sent detail original, and the bridge said what it did');
      assert.match(changed[0]?.detail ?? '', /image detail 'original' was sent as 'high'/);
      assert.deepEqual(unexpectedWarnings(session.traffic).filter((warning) => warning.kind !== 'image_detail_changed'), []);
    } finally {
      await session.close();
    }
  });
});
