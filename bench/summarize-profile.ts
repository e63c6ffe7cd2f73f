/**
 * Prints where a V8 CPU profile (`--cpu-prof`, e.g. from `npm run bench -- --cpu-prof`) spent its
 * time: self time per function and per package, heaviest first.
 *
 *   node --import tsx bench/summarize-profile.ts bench/results/profiles/<file>.cpuprofile [--top 40]
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseJson } from '../src/core/parse-json.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** `node_modules/express/lib/…` → `express`; anything else keeps its file name. */
function packageOf(file: string): string {
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (modules?.[1]) return modules[1];
  if (file === '') return '(native)';
  if (file.startsWith('node:') || !file.includes('/')) return 'node internals';
  return file.replace(/^.*?(src|bench|test)\//, '$1/');
}

/** The bench bundles carry source maps: frames are mapped back to their source file. */
function createSourceLocator(): (frame: ProfileNode['callFrame']) => string {
  const maps = new Map<string, SourceMap | null>();
  return (frame) => {
    if (!frame.url.startsWith('file://')) return frame.url;
    let map = maps.get(frame.url);
    if (map === undefined) {
      const mapFile = `${fileURLToPath(frame.url)}.map`;
      const payload = existsSync(mapFile) ? parseJson(readFileSync(mapFile, 'utf8')) : null;
      map = payload?.success ? new SourceMap(payload.value as ConstructorParameters<typeof SourceMap>[0]) : null;
      maps.set(frame.url, map);
    }
    if (map === null) return fileURLToPath(frame.url);
    const entry = map.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
    return entry.originalSource ?? fileURLToPath(frame.url);
  };
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '40' } } });
  const file = positionals[0];
  if (!file) throw new Error('usage: summarize-profile.ts FILE.cpuprofile [--top N]');
  const parsed = parseJson(readFileSync(file, 'utf8'));
  if (!parsed.success) throw new Error(`${file} is not JSON`);
  const profile = parsed.value as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfMicroseconds = new Map<number, number>();
  profile.samples.forEach((id, index) => selfMicroseconds.set(id, (selfMicroseconds.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));

  const locate = createSourceLocator();
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let busy = 0;
  for (const [id, microseconds] of selfMicroseconds) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const name = frame.functionName || '(anonymous)';
    const special = name === '(idle)' || name === '(program)' || name === '(garbage collector)';
    if (name !== '(idle)') busy += microseconds;
    const file = special ? '' : locate(frame);
    const key = `${name}  ${packageOf(file)}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + microseconds);
    const packageName = special ? name : packageOf(file);
    byPackage.set(packageName, (byPackage.get(packageName) ?? 0) + microseconds);
  }
  const total = (profile.endTime - profile.startTime) / 1000;
  const print = (title: string, entries: Map<string, number>, limit: number): void => {
    process.stdout.write(`\n${title}\n`);
    for (const [name, microseconds] of [...entries].sort((left, right) => right[1] - left[1]).slice(0, limit)) {
      process.stdout.write(`${(microseconds / 1000).toFixed(1).padStart(9)} ms ${((microseconds / 1000 / total) * 100).toFixed(1).padStart(5)} %  ${name}\n`);
    }
  };
  process.stdout.write(`${file}: ${total.toFixed(0)} ms profiled, ${(busy / 1000).toFixed(0)} ms busy\n`);
  print('self time by package / file', byPackage, 25);
  print('self time by function', byFunction, Number(values.top));
}

// `| head` closes the pipe early: that is not an error.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0);
  throw error;
});
main();
