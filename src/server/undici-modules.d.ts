// Types for the two undici modules the bridge loads on their own (undici-lean.ts): each is the
// CommonJS module behind a name the package's index re-exports, pinned with undici's exact version.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export = AgentClass;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  /** Dispatcher.prototype.request as the index installs it: called with the dispatcher as `this`. */
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
  export = request;
}
