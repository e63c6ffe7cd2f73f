/**
 * The bench's reference minimal hop: what a bare Node proxy hop costs on this machine: parse +
 * stringify + forward + relay, no bridge logic. The report compares it with the direct calls the
 * same way it compares the bridge, so the hop's own cost (one more process, one more pair of loopback
 * connections, one parse and one serialisation of the body) can be told apart from the bridge's.
 *
 * It is sent the lowered Chat request (the body the direct side sends), so it has nothing to convert:
 * it reads the whole body, `JSON.parse`s it and `JSON.stringify`s it unchanged (any proxy that must
 * rewrite a JSON body pays at least this), posts it to the backend through one keep-alive undici agent
 * set up like the bridge's upstream agent, and relays status, content type and body bytes as they
 * arrive. No validation, no conversion, no logging, no backpressure handling: every shortcut is in
 * the hop's favour, so it is a floor, not a competitor. Bench-only; it speaks the bridge child's IPC
 * protocol (ready, memory, stop).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { serveParent } from './serve-parent.ts';

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

async function main(): Promise<void> {
  // `--quiet`: no line per failed relay (the soak-memory phase cuts backend streams on purpose).
  const { values } = parseArgs({ options: { backend: { type: 'string' }, quiet: { type: 'boolean' } } });
  if (!values.backend) throw new Error('bench floor: --backend URL is required');
  const target = `${values.backend.replace(/\/+$/, '')}/chat/completions`;
  // The same keep-alive settings as the bridge's upstream agent (below the mock's 5 s idle close,
  // undici's own timers off), so both hops reuse their backend sockets the same way.
  const agent = new Agent({ keepAliveTimeout: 4_000, keepAliveMaxTimeout: 4_000, headersTimeout: 0, bodyTimeout: 0 });

  const relay = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      const body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      const upstream = await request(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent });
      const contentType = upstream.headers['content-type'];
      outgoing.writeHead(upstream.statusCode, typeof contentType === 'string' ? { 'content-type': contentType } : {});
      // The bench's answers are small and its client reads them to the end, so write() never has to wait.
      for await (const chunk of upstream.body) outgoing.write(chunk as Buffer);
      outgoing.end();
    } catch (error: unknown) {
      if (!values.quiet) process.stderr.write(`bench floor error: ${describe(error)}\n`);
      if (outgoing.headersSent) {
        outgoing.destroy();
        return;
      }
      outgoing.writeHead(502, { 'content-type': 'text/plain' });
      outgoing.end('bench floor: relay failed');
    }
  };

  const server = createServer((incoming, outgoing) => void relay(incoming, outgoing));
  // The bridge's server settings (src/server/start-server.ts), so the client's pooled sockets behave alike.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;

  const close = async (): Promise<void> => {
    server.closeAllConnections();
    await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
    await agent.close();
  };
  serveParent('floor', `http://127.0.0.1:${port}`, close);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench floor: ${describe(error)}\n`);
  process.exit(1);
});
