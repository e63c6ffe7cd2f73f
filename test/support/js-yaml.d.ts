// js-yaml ships no types; the repository tests use only its parser.
declare module 'js-yaml' {
  export function load(text: string, options?: { filename?: string }): unknown;
}
