// Layer rules (docs/ARCHITECTURE.md): core is pure, server/cli never touch vscode, only the extension does.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltinsWithoutIo = ['node:crypto', 'node:string_decoder', 'node:util', 'node:buffer'];

// Every schema is built with zod's functional API, through one module that also sets zod's English
// messages (src/core/schema/zod.ts says why: the default API costs about 10 MB per process).
const zodDefaultApi = { name: 'zod', message: "Import z from src/core/schema/zod.ts (zod's functional API), not from 'zod'." };

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.vscode-test/**', '.tools/**', 'coverage/**', 'bench/results/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [zodDefaultApi],
          patterns: [
            {
              // A regex, not a gitignore group: `!../**` negations do not match parent-relative paths.
              regex: `^(?!zod/mini$|zod/v4/locales/en\\.js$|\\.{1,2}/|(?:${nodeBuiltinsWithoutIo.join('|')})$)`,
              message: 'src/core is pure: it may import only zod, itself and Node built-ins that do no I/O.',
            },
            {
              regex: '(^|/)\\.\\./(server|cli|extension|shared)/',
              message: 'src/core must not reach into the layers built on it.',
            },
          ],
        },
      ],
    },
  },
  {
    // The server and the CLI run outside VS Code: never vscode, never the extension; the server also
    // never reaches into the CLI that starts it.
    files: ['src/server/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'Only src/extension may import vscode.' }, zodDefaultApi],
          patterns: [
            { regex: '(^|/)\\.\\./(extension|cli)/', message: 'src/server must not import src/extension or src/cli, which are built on it.' },
            {
              // The bridge never writes a user's Codex files: profiles, config.toml and their TOML belong
              // to the CLI and the extension. The model catalog it serves is src/core/model-catalog.
              regex: '(^|/)codex-config/',
              message: 'src/server must not import Codex configuration (src/codex-config, src/core/codex-config); only the CLI and the extension write it.',
            },
          ],
        },
      ],
    },
  },
  {
    // Codex configuration files: read, checked and written for the CLI and the extension, outside VS Code.
    files: ['src/codex-config/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'Only src/extension may import vscode.' }, zodDefaultApi],
          patterns: [{ regex: '(^|/)\\.\\./(server|cli|extension)/', message: 'src/codex-config may import only src/core.' }],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'Only src/extension may import vscode.' }, zodDefaultApi],
          patterns: [{ regex: '(^|/)\\.\\./extension/', message: 'src/cli must not import src/extension.' }],
        },
      ],
    },
  },
  {
    // The webview protocol is shared by the extension host and the browser bundle: it depends on core
    // and zod only.
    files: ['src/shared/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'Only src/extension may import vscode.' }, zodDefaultApi],
          patterns: [{ regex: '(^|/)\\.\\./(server|cli|extension)/', message: 'src/shared may import only src/core.' }],
        },
      ],
    },
  },
  {
    files: ['src/extension/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [zodDefaultApi] }],
    },
  },
  {
    // The webview runs in the browser and renders model output, which is attacker-controlled: it
    // imports nothing of the host but the protocol's types (so zod schemas never reach the bundle), and
    // never turns text into markup or sets an attribute that loads or runs something.
    files: ['media/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vscode', message: 'The webview cannot import vscode; it talks to the host by messages.' }],
          patterns: [
            { regex: '(^|/)src/(server|cli|extension|core)/', message: 'media/ may import only the webview protocol (src/shared), as types.' },
            { regex: '(^|/)src/shared/', allowTypeImports: true, message: 'Import the webview protocol as types only (import type …).' },
          ],
        },
      ],
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only.' },
        { selector: "MemberExpression[property.name=/^(innerHTML|outerHTML)$/]", message: 'No innerHTML/outerHTML in the webview: build nodes and set textContent.' },
        { selector: "CallExpression[callee.property.name=/^(insertAdjacentHTML|createContextualFragment|write|writeln)$/]", message: 'No markup parsing in the webview.' },
        { selector: "NewExpression[callee.name='DOMParser']", message: 'No markup parsing in the webview.' },
        {
          selector: "CallExpression[callee.property.name=/^setAttribute(NS)?$/] > Literal:first-child[value=/^(src|href|style|srcdoc|on[a-z]+)$/i]",
          message: 'No attribute that loads or runs something (src, href, style, on…) in the webview.',
        },
        {
          selector: "Property[key.name='attributes'] > ObjectExpression > Property[key.name=/^(src|href|style|srcdoc|on[a-z]+)$/i]",
          message: 'No attribute that loads or runs something (src, href, style, on…) in the webview.',
        },
      ],
    },
  },
  {
    // The product never depends on the rooms that test and measure it.
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)(mock-backend|test|bench)/', message: 'src/ must not import the mock backend, tests or the bench.' }] },
      ],
    },
  },
  {
    // The mock backend imitates the engines on its own: tests, the demo and the bench import it, it
    // imports none of them and none of the bridge, so it cannot agree with the bridge by sharing code.
    files: ['mock-backend/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)\\.\\./(src|test|bench|scripts)/', message: 'mock-backend/ imports only itself, zod and Node.' }] },
      ],
    },
  },
  {
    // The tests' own files serve the tests alone: the bench, the scripts and the harness they share
    // with the tests (harness/: the soak's load, the Codex session driver) never import them, so a
    // change to a test cannot change what the bench measures or what the demo shows.
    files: ['bench/**/*.ts', 'scripts/**/*.ts', 'scripts/**/*.mjs', 'harness/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '(^|/)test/', message: 'bench/, scripts/ and harness/ must not import the tests (test/); share code through harness/ or mock-backend/.' }] },
      ],
    },
  },
  {
    files: ['scripts/**/*.mjs', 'eslint.config.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
