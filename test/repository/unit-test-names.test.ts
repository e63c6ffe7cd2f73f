import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { listRepositoryFiles, REPOSITORY_ROOT } from '../support/repository-files.ts';

/**
 * A unit test is found from the file it tests: `test/unit/<room>/<path>/<name>.test.ts` tests
 * `<room's folder>/<path>/<name>.ts`, and `<name>.<aspect>.test.ts` one aspect of it (its corpus, its
 * memory bound). Helpers live in test/support, property and fuzz tests in test/properties, checks of
 * the repository itself in test/repository.
 */
const ROOMS: Readonly<Record<string, string>> = {
  core: 'src/core',
  server: 'src/server',
  extension: 'src/extension',
  cli: 'src/cli',
  'codex-config': 'src/codex-config',
  shared: 'src/shared',
  media: 'media',
  'mock-backend': 'mock-backend',
  support: 'test/support',
};

/** Each file under test/unit that does not follow the rule, with what is wrong; `exists` answers for repository paths. */
export function findMisplacedUnitTests(paths: readonly string[], exists: (path: string) => boolean): string[] {
  return paths.flatMap((path) => {
    const match = /^test\/unit\/([^/]+)\/(.+?)(?:\.[a-z0-9-]+)?\.test\.ts$/.exec(path.split('\\').join('/'));
    if (!match) return [`${path}: only \`*.test.ts\` files belong in test/unit (helpers go to test/support)`];
    const [, room = '', rest = ''] = match;
    const folder = ROOMS[room];
    if (folder === undefined) return [`${path}: test/unit/${room} is no room of the repository (${Object.keys(ROOMS).join(', ')})`];
    const source = `${folder}/${rest}.ts`;
    return exists(source) ? [] : [`${path}: tests no file; ${source} does not exist`];
  });
}

describe('unit test names', () => {
  it('every file under test/unit is named after the source file it tests, in the same place', () => {
    const files = listRepositoryFiles(['test/unit'], /./, new Set());
    assert.ok(files.length > 50, `found ${files.length} unit test files`);
    assert.deepEqual(findMisplacedUnitTests(files, (path) => existsSync(join(REPOSITORY_ROOT, path))), []);
  });

  it('names the offenders: a test of a missing source, a folder that is no room, a helper file', () => {
    const exists = (path: string): boolean => path === 'src/core/apply-patch/apply-patch-verdict.ts';
    assert.deepEqual(findMisplacedUnitTests(['test/unit/core/apply-patch/apply-patch-verdict.test.ts', 'test/unit/core/apply-patch/apply-patch-verdict.corpus.test.ts'], exists), []);
    assert.deepEqual(
      findMisplacedUnitTests(['test/unit/core/apply-patch-verdict.test.ts', 'test/unit/panel/traffic-store.test.ts', 'test/unit/core/helpers.ts'], exists),
      [
        'test/unit/core/apply-patch-verdict.test.ts: tests no file; src/core/apply-patch-verdict.ts does not exist',
        'test/unit/panel/traffic-store.test.ts: test/unit/panel is no room of the repository (core, server, extension, cli, codex-config, shared, media, mock-backend, support)',
        'test/unit/core/helpers.ts: only `*.test.ts` files belong in test/unit (helpers go to test/support)',
      ],
    );
  });
});
