import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A program that holds a port and pretends to be the bridge, as a hostile process on the same machine
 * would: it never knew the bridge token, records everything sent to it, and answers the identity
 * route with whatever proof it can compute from what it was given. If a client hands it the token
 * (as a Bearer header or anywhere else), it uses it to forge every proof it can think of, so a client
 * that leaks the token is caught by the forged proof passing.
 */
export interface SquattedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface PortSquatter {
  port: number;
  url: string;
  requests: SquattedRequest[];
  /** Every distinct string the squatter saw that could be a secret (bearer values, query values, body). */
  harvested(): string[];
  close(): Promise<void>;
}

function bearerOf(headers: IncomingMessage['headers']): string | null {
  const authorization = headers.authorization ?? '';
  return authorization.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : null;
}

/** Every proof a token thief would try: the old and the new message shapes. */
function forgeProofs(token: string, challenge: string, port: number): string[] {
  const messages = [challenge, `freeform-bridge identity\n${port}\n${challenge}`];
  return messages.map((message) => createHmac('sha256', token).update(message, 'utf8').digest('hex'));
}

/** Listens on `port` (0 picks one). */
export async function startPortSquatter(options: { port?: number } = {}): Promise<PortSquatter> {
  const squatter = await squatPort(options.port ?? 0, null);
  if (squatter === null) throw new Error('unreachable: a squatter that does not race always binds or throws');
  return squatter;
}

/**
 * Retries the bind on a taken `port` every millisecond, as a program waiting for the bridge to go
 * away would, until it wins, or until `keepTrying()` says someone else won (then null).
 */
export function racePortSquatter(port: number, keepTrying: () => boolean): Promise<PortSquatter | null> {
  return squatPort(port, keepTrying);
}

async function squatPort(portToTake: number, keepTrying: (() => boolean) | null): Promise<PortSquatter | null> {
  const requests: SquattedRequest[] = [];
  const sockets = new Set<Socket>();
  let proofIndex = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded: SquattedRequest = { method: request.method ?? 'GET', url: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      const url = new URL(recorded.url, 'http://squatter');
      if (url.pathname === '/v1/bridge/identity') {
        const token = bearerOf(request.headers);
        const challenge = url.searchParams.get('challenge') ?? '';
        const proofs = token === null ? ['ab'.repeat(32)] : forgeProofs(token, challenge, (server.address() as AddressInfo).port);
        // One forged shape per check; a test that calls the check twice covers both.
        const proof = proofs[proofIndex++ % proofs.length];
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ name: 'freeform-bridge', version: '0.1.0', instanceId: 'squatter', pid: 1, backend: 'http://127.0.0.1:9/v1', proof }));
        return;
      }
      // Any other route (the traffic stream, a Codex turn): keep it open as a thief would, saying nothing.
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(portToTake, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  for (;;) {
    try {
      await listen();
      break;
    } catch (error) {
      if (keepTrying === null || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
      if (!keepTrying()) return null;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    harvested() {
      const found = new Set<string>();
      for (const request of requests) {
        const bearer = bearerOf(request.headers);
        if (bearer !== null) found.add(bearer);
        for (const value of new URL(request.url, 'http://squatter').searchParams.values()) found.add(value);
        for (const value of Object.values(request.headers)) if (typeof value === 'string') found.add(value);
        if (request.body) found.add(request.body);
      }
      return [...found];
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
