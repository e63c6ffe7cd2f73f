import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';
import * as undici from 'undici';
import { Agent, request } from '../../../src/server/undici-lean.ts';

/**
 * The bridge loads undici's Agent and request API from their own modules (src/server/undici-lean.ts),
 * not from the package's index. These checks fail when an undici upgrade moves or changes them, or
 * when an import of the whole package slips back into a bundle.
 */

describe('undici, loaded lean', () => {
  let server: Server;
  let origin = '';
  const seen: Array<{ method: string; url: string; authorization: string | undefined; body: string }> = [];

  before(async () => {
    server = createServer((incoming, outgoing) => {
      const chunks: Buffer[] = [];
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
      incoming.on('end', () => {
        seen.push({ method: incoming.method ?? '', url: incoming.url ?? '', authorization: incoming.headers.authorization, body: Buffer.concat(chunks).toString() });
        if (incoming.url?.startsWith('/slow')) return; // never answers: the caller's signal ends it
        outgoing.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  });

  it('is the Agent class the package exports', () => {
    assert.equal(Agent, undici.Agent);
  });

  it('sends method, path with its query, headers and body, and reads the answer', async () => {
    const agent = new Agent();
    try {
      const response = await request(`${origin}/proxy/v1/chat/completions?api-version=2`, {
        dispatcher: agent,
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: new TextEncoder().encode('{"a":1}'),
        signal: new AbortController().signal,
      });
      assert.equal(response.statusCode, 201);
      assert.deepEqual(await response.body.json(), { ok: true });
      assert.deepEqual(seen.at(-1), { method: 'POST', url: '/proxy/v1/chat/completions?api-version=2', authorization: 'Bearer k', body: '{"a":1}' });
    } finally {
      await agent.close();
    }
  });

  it('rejects when the signal aborts, with the reason undici gives', async () => {
    const agent = new Agent();
    const controller = new AbortController();
    try {
      const pending = request(`${origin}/slow`, { dispatcher: agent, method: 'GET', signal: controller.signal });
      setTimeout(() => controller.abort(new Error('client disconnected')), 20);
      await assert.rejects(pending, /client disconnected/);
    } finally {
      await agent.destroy();
    }
  });

  it('keeps the rest of undici out of the bundles that run the bridge', async () => {
    for (const entry of ['src/cli/main.ts', 'src/server/bridge-worker-entry.ts']) {
      const result = await build({ entryPoints: [resolve(process.cwd(), entry)], bundle: true, platform: 'node', format: 'cjs', target: 'node20', write: false, metafile: true, logLevel: 'error', outfile: 'out.js' });
      const inputs = Object.keys(result.metafile.inputs).filter((path) => path.includes('node_modules/undici/'));
      assert.ok(inputs.some((path) => path.endsWith('undici/lib/dispatcher/agent.js')), `${entry} bundles undici's Agent`);
      // The request API's answer body borrows a few helpers of fetch's; fetch itself, WebSocket,
      // EventSource, the caches and the mocks stay out.
      const unwanted = inputs.filter((path) => /undici\/(index\.js|lib\/web\/(fetch\/index|websocket|eventsource|cache)|lib\/mock\/|lib\/cache\/)/.test(path));
      assert.deepEqual(unwanted, [], `${entry} bundles no more of undici than the Agent and its request API`);
    }
  });
});
