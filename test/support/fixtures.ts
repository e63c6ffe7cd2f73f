import { resolve } from 'node:path';

/**
 * Every file a test, script or benchmark reads lives under `test/fixtures/` (INDEX.md there says where
 * each came from). The path is found from this module, not from the working directory, so a test runs
 * the same from any folder and on a machine that has nothing but a clone of this repository.
 */
export const FIXTURES_DIRECTORY = resolve(__dirname, '../fixtures');

export function fixturePath(...segments: string[]): string {
  return resolve(FIXTURES_DIRECTORY, ...segments);
}
