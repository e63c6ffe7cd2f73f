// Layer rules (docs/ARCHITECTURE.md): core is pure, server/cli never touch vscode, only the extension does.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const nodeBuiltinsWithoutIo = ['node:crypto', 'node:string_decoder', 'node:util', 'node:buffer'];

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
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only (style.md §3).' },
      ],
    },
  },
  {
    files: ['src/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // A regex, not a gitignore group: `!../**` negations do not match parent-relative paths.
              regex: `^(?!zod$|\\.{1,2}/|(?:${nodeBuiltinsWithoutIo.join('|')})$)`,
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
    files: ['src/server/**/*.ts', 'src/cli/**/*.ts', 'src/shared/**/*.ts', 'media/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'vscode', message: 'Only src/extension may import vscode.' }] },
      ],
    },
  },
  {
    files: ['scripts/**/*.mjs', 'eslint.config.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
