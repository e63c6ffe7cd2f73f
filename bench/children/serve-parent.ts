/**
 * The IPC side every bench server child shares (bridge and reference hop): announce the URL, answer
 * memory readings (collecting garbage first when asked; the children run with --expose-gc), stop
 * when told or when the parent goes away.
 */
import type { ChildMessage, ParentMessage, ReadyMessage } from '../child-protocol.ts';

function send(message: ChildMessage): void {
  process.send?.(message);
}

function collectGarbage(name: string): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error(`bench ${name}: start with --expose-gc`);
  // Twice: the first pass may only finalise objects that a second pass then frees.
  collect();
  collect();
}

export function serveParent(name: string, url: string, close: () => Promise<void>, ready: Partial<ReadyMessage> = {}): void {
  // A normal exit (not a kill) is what writes a --cpu-prof profile.
  const stop = (): void => void close().then(() => process.exit(0));
  process.on('message', (message: ParentMessage) => {
    switch (message.type) {
      case 'memory':
        if (message.collectGarbage) collectGarbage(name);
        send({ type: 'memory', id: message.id, memory: process.memoryUsage() });
        break;
      case 'stop':
        stop();
        break;
      case 'record-writes':
      case 'take-writes':
        break;
      case 'event-loop-delay':
        // The extension host child answers these itself (bench/children/extension-host-child.ts).
        break;
      default: {
        const unreachable: never = message;
        throw new Error(`unknown message ${JSON.stringify(unreachable)}`);
      }
    }
  });
  process.on('disconnect', stop);
  send({ ...ready, type: 'ready', url });
}
