import type { Dispatcher } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import requestOnDispatcher from 'undici/lib/api/api-request.js';

/*
 * undici's Agent and its request API, without the rest of the package. undici's index loads fetch,
 * WebSocket, EventSource, the HTTP caches and the mock agents as well, which the bridge never uses:
 * measured with Node 20, `require('undici')` adds 20.8 MB of RSS to a bare process and these two
 * modules 12.1 MB; an idle `freeform-bridge serve` went from 77.8 to 69.7 MB and dist/cli.js from
 * 3.42 to 2.82 MB. The two paths are files of the exact undici version package.json pins (the index
 * re-exports them under the same names); test/unit/server/undici-lean.test.ts fails when an upgrade
 * moves or changes them, or when an import of the whole package comes back into a bundle.
 */

export const Agent = AgentClass;

/** `undici.request(url, options)` for a dispatcher given in the options, as the index's wrapper builds it. */
export function request(url: string, options: Omit<Dispatcher.RequestOptions, 'origin' | 'path'> & { dispatcher: Dispatcher }): Promise<Dispatcher.ResponseData> {
  const { dispatcher, ...rest } = options;
  const parsed = new URL(url);
  return requestOnDispatcher.call(dispatcher, { ...rest, origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` });
}
