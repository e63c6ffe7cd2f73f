/**
 * The named checks of the browser-driven phases (vsix install, traffic panel UI): each prints ✔ or ✗
 * like the mocha suites, and the tally feeds the plain `N passed, N failed` closing line CI reads.
 */
export interface CheckRecorder {
  tally: { passed: number; failed: number };
  elapsed(): string;
  check<T>(name: string, body: () => Promise<T>): Promise<T>;
}

export function createCheckRecorder(): CheckRecorder {
  const startedAt = Date.now();
  const tally = { passed: 0, failed: 0 };
  const elapsed = (): string => `${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
  return {
    tally,
    elapsed,
    async check<T>(name: string, body: () => Promise<T>): Promise<T> {
      try {
        const value = await body();
        tally.passed += 1;
        console.log(`    ✔ ${name} [${elapsed()}]`);
        return value;
      } catch (error) {
        tally.failed += 1;
        console.log(`    ✗ ${name} [${elapsed()}]`);
        throw error;
      }
    },
  };
}

export function assertThat(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

/**
 * Runs a browser-driven phase: prints its title, then, however `main` ends, how long it took and the
 * `N passed, N failed` line CI reads, and exits non-zero when any check failed.
 */
export function runPhase(title: string, name: string, recorder: CheckRecorder, main: () => Promise<number>): void {
  console.log(title);
  void main().then((code) => {
    console.log(`${name} finished in ${recorder.elapsed()}`);
    console.log(`${recorder.tally.passed} passed, ${recorder.tally.failed} failed`);
    process.exit(recorder.tally.failed > 0 ? Math.max(code, 1) : 0);
  });
}
