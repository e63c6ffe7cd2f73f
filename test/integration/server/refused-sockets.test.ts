import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startTestBridge, type StartedBridge } from '../../support/bridge-harness.ts';
import { waitUntil } from '../../support/exchange-outcome.ts';
import { sendRawHttpRequest } from '../../support/raw-http.ts';
import { startScriptedBackend, type ScriptedBackend } from '../../../mock-backend/scripted-backend.ts';

/**
 * Sockets a client without the token, or a client that never finishes its body, could hold open: a
 * refused request is answered with `Connection: close` and its socket closed (its body is not read),
 * and a body that does not arrive within the body timeout ends the connection. Otherwise a local
 * process can hold sockets one byte at a time until the process runs out of descriptors.
 */

const TOKEN = 'bridge-token-refused-sockets';
let backend: ScriptedBackend;
let bridge: StartedBridge;
before(async () => {
  backend = await startScriptedBackend();
  bridge = await startTestBridge({ backendUrl: backend.url, getToken: () => TOKEN, requestBodyTimeoutMs: 1_000 });
});
after(async () => {
  await bridge.close();
  await backend.close();
});

/** Sends the head of a POST announcing a large body, then one byte of it every 20 ms until the server closes the socket. */
function trickle(headers: Record<string, string>): { socket: Socket; received: () => string; closed: () => boolean; stop: () => void } {
  const socket = connect(bridge.port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  const head = Object.entries({ host: `127.0.0.1:${bridge.port}`, 'content-type': 'application/json', 'content-length': '1000000', ...headers })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`POST /v1/responses HTTP/1.1\r\n${head}\r\n{`);
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(' ');
  }, 20);
  socket.on('close', () => clearInterval(timer));
  return { socket, received: () => received, closed: () => closed, stop: () => socket.destroy() };
}

describe('sockets the bridge does not keep', () => {
  it('a refused request (no token) gets its 401 with Connection: close, and the socket is closed without reading the body', async () => {
    const client = trickle({});
    try {
      await waitUntil(() => client.closed(), 'the bridge to close the refused socket');
      assert.match(client.received(), /^HTTP\/1\.1 401 /);
      assert.match(client.received(), /\r\nconnection: close\r\n/i);
    } finally {
      client.stop();
    }
  });

  it('a body that does not arrive within the body timeout ends the connection, token or not', async () => {
    const client = trickle({ authorization: `Bearer ${TOKEN}` });
    try {
      await waitUntil(() => client.closed(), 'the bridge to end a request whose body never completes');
      assert.match(client.received(), /^HTTP\/1\.1 408 |^$/);
      assert.equal(backend.requests.length, 0, 'nothing reached the backend');
    } finally {
      client.stop();
    }
  });

  it('a Host header with junk after the port or after ] is refused as malformed, not cut down to a loopback name', async () => {
    for (const host of [`127.0.0.1:${bridge.port}junk`, '[::1]junk', `[::1]:${bridge.port}:evil.example`, `localhost:${bridge.port}@evil.example`, `127.0.0.1:${bridge.port} evil`]) {
      const response = await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz', headers: { host } });
      assert.equal(response.status, 400, host);
      assert.match(response.text, /malformed_host/, host);
    }
    for (const host of [`127.0.0.1:${bridge.port}`, `[::1]:${bridge.port}`, 'localhost']) {
      assert.equal((await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz', headers: { host } })).status, 200, host);
    }
  });

  it('a Host header with an IPv4 part over 255 or a port over 65535 is refused as malformed, not taken for loopback', async () => {
    for (const host of ['127.999.999.999', `127.999.999.999:${bridge.port}`, '127.0.0.256', '127.0.0.1:99999', 'localhost:65536', '[::1]:70000']) {
      const response = await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz', headers: { host } });
      assert.equal(response.status, 400, host);
      assert.match(response.text, /malformed_host/, host);
    }
    for (const host of ['127.255.255.255', '127.0.0.1:65535', `127.0.0.1:${bridge.port}`]) {
      assert.equal((await sendRawHttpRequest(bridge.url, { method: 'GET', path: '/healthz', headers: { host } })).status, 200, host);
    }
  });
});
