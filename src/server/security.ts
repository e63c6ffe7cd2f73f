import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { sendFailure, type HttpAnswer, type SecurityRefusal } from './failure-map.ts';

/**
 * A local bridge is reachable by every process on the machine and every web page in the user's
 * browser. These checks run before the body is parsed, so a refused request costs nothing.
 */
const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Four dotted decimal parts: an IPv4 address when each is at most 255, no name and no address otherwise. */
const DOTTED_QUAD = /^\d+\.\d+\.\d+\.\d+$/;

function isDottedQuadInRange(name: string): boolean {
  return name.split('.').every((part) => part.length <= 3 && Number(part) <= 255);
}

export function isLoopbackHostname(hostname: string): boolean {
  const lower = hostname.toLowerCase();
  if (DOTTED_QUAD.test(lower)) return lower.startsWith('127.') && isDottedQuadInRange(lower);
  return LOOPBACK_HOSTNAMES.has(lower) || lower.endsWith('.localhost');
}

/**
 * A Host header as the standard spells it: a name or IPv4 address, or an IPv6 address in brackets,
 * then at most a port of digits. Anything else (junk after the port or after `]`) is refused whole
 * rather than cut down to a name that happens to pass.
 */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/i;

const MAX_PORT = 65_535;

/**
 * Splits a Host header into its name, keeping IPv6 brackets (`[::1]:8080` → `[::1]`); null when it is
 * malformed, including a port over 65535 and a dotted-quad address with a part over 255
 * (`127.999.999.999`), which name no address a client could have reached.
 */
export function hostnameOfHostHeader(host: string): string | null {
  const match = HOST_HEADER.exec(host);
  const hostname = match?.[1];
  if (match === null || hostname === undefined) return null;
  if (match[2] !== undefined && Number(match[2]) > MAX_PORT) return null;
  if (DOTTED_QUAD.test(hostname) && !isDottedQuadInRange(hostname)) return null;
  return hostname;
}

export interface SecurityOptions {
  /** Extra Host names accepted besides loopback (the bind address when the user chose a non-loopback host). */
  allowedHostnames: readonly string[];
  /** Read per request so a token rotated in the extension applies at once; null disables the check. */
  getToken: () => string | null;
}

/**
 * Routes answered without the token: the health check, and the bridge's identity proof, which a
 * client asks for before it trusts the port's holder with the token (bridge-sharing-routes.ts).
 */
const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/v1/bridge/identity']);

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Constant-time comparison; hashing first makes the lengths equal so length leaks nothing either. */
export function tokensMatch(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The checks themselves; null lets the request through. */
function createSecurityCheck(options: SecurityOptions): (request: IncomingMessage, path: string) => SecurityRefusal | null {
  const extraHostnames = new Set(options.allowedHostnames.map((name) => name.toLowerCase()));
  return function checkSecurity(request, path) {
    const host = request.headers.host;
    if (!host) return { reason: 'missing_host', message: 'request has no Host header' };
    const hostname = hostnameOfHostHeader(host);
    if (hostname === null) return { reason: 'malformed_host', message: `the Host header '${host.slice(0, 100)}' is malformed` };
    if (!isLoopbackHostname(hostname) && !extraHostnames.has(hostname.toLowerCase())) {
      // DNS rebinding: a web page's own domain resolving to 127.0.0.1 still sends its own Host.
      return { reason: 'host_not_allowed', message: `Host '${host}' is not a loopback address; freeform-bridge refuses it (DNS-rebinding protection)` };
    }
    if (request.headers.origin !== undefined || request.method === 'OPTIONS') {
      // Codex never sends Origin; browsers always do for cross-site requests and preflights.
      return { reason: 'origin_not_allowed', message: 'requests from web pages (with an Origin header or a CORS preflight) are refused by freeform-bridge' };
    }
    const token = options.getToken();
    if (token !== null && !OPEN_PATHS.has(path)) {
      const authorization = request.headers.authorization ?? '';
      const presented = authorization.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : '';
      if (!presented || !tokensMatch(presented, token)) {
        return {
          reason: 'invalid_bridge_token',
          message: presented
            ? 'the bridge token is wrong (Authorization: Bearer …)'
            : 'the bridge requires a token: send Authorization: Bearer <token> (the Codex profile written by freeform-bridge does this)',
        };
      }
    }
    return null;
  };
}

/**
 * The first middleware of the app, for every route. A refusal is answered at once (failure-map.ts
 * picks the status); `onRefused` hears every one (the app reports those of `/v1/responses` to the
 * panel and the log).
 */
export function createSecurityMiddleware(options: SecurityOptions, onRefused: (path: string, answer: HttpAnswer) => void = () => undefined) {
  const check = createSecurityCheck(options);
  return function checkSecurity(request: Request, response: Response, next: NextFunction): void {
    const refusal = check(request, request.path);
    if (refusal) {
      request.resume();
      onRefused(request.path, sendFailure(response, { kind: 'refused', refusal }));
      return;
    }
    next();
  };
}
