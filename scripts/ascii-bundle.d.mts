// Types of scripts/ascii-bundle.mjs, which scripts/build.mjs runs without a TypeScript loader.
export function escapeNonAscii(text: string): string;
export function makeBundleAscii(path: string): void;
