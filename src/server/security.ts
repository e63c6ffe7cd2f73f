import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { createOpenAiErrorBody } from '../core/openai-error.ts';

/**
 * A local bridge is reachable by every process on the machine and every web page in the user's
 * browser. These checks run before the body is parsed, so a refused request costs nothing.
 */
const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function isLoopbackHostname(hostname: string): boolean {
  const lower = hostname.toLowerCase();
  return LOOPBACK_HOSTNAMES.has(lower) || /^127(?:\.\d{1,3}){3}$/.test(lower) || lower.endsWith('.localhost');
}

/** Splits a Host header into its name, keeping IPv6 brackets (`[::1]:8080` → `[::1]`). */
export function hostnameOfHostHeader(host: string): string {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

export interface SecurityOptions {
  /** Extra Host names accepted besides loopback (the bind address when the user chose a non-loopback host). */
  allowedHostnames: readonly string[];
  /** Read per request so a token rotated in the extension applies at once; null disables the check. */
  getToken: () => string | null;
}

function refuse(response: Response, status: number, message: string, code: string): void {
  response.status(status).json(createOpenAiErrorBody(message, { type: 'invalid_request_error', code }));
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** Constant-time comparison; hashing first makes the lengths equal so length leaks nothing either. */
export function tokensMatch(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

export function createSecurityMiddleware(options: SecurityOptions) {
  const extraHostnames = new Set(options.allowedHostnames.map((name) => name.toLowerCase()));
  return function checkSecurity(request: Request, response: Response, next: NextFunction): void {
    const host = request.headers.host;
    if (!host) {
      refuse(response, 400, 'request has no Host header', 'missing_host');
      return;
    }
    const hostname = hostnameOfHostHeader(host);
    if (!isLoopbackHostname(hostname) && !extraHostnames.has(hostname.toLowerCase())) {
      // DNS rebinding: a web page's own domain resolving to 127.0.0.1 still sends its own Host.
      refuse(response, 403, `Host '${host}' is not a loopback address; freeform-bridge refuses it (DNS-rebinding protection)`, 'host_not_allowed');
      return;
    }
    if (request.headers.origin !== undefined || request.method === 'OPTIONS') {
      // Codex never sends Origin; browsers always do for cross-site requests and preflights.
      refuse(response, 403, 'requests from web pages (with an Origin header or a CORS preflight) are refused by freeform-bridge', 'origin_not_allowed');
      return;
    }
    const token = options.getToken();
    if (token !== null && request.path !== '/healthz') {
      const authorization = request.headers.authorization ?? '';
      const presented = authorization.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : '';
      if (!presented || !tokensMatch(presented, token)) {
        refuse(
          response,
          401,
          presented ? 'the bridge token is wrong (Authorization: Bearer …)' : 'the bridge requires a token: send Authorization: Bearer <token> (the Codex profile written by freeform-bridge does this)',
          'invalid_bridge_token',
        );
        return;
      }
    }
    next();
  };
}
