// ESLint (flat config): typescript-eslint's recommended rules (type-unaware, so linting stays
// fast and needs no project build) over the sources, tests, scripts and benchmarks.
// Run with `npm run lint` (which also type-checks, checks formatting and looks for import cycles).
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';
import { layersConfig } from './eslint.layers.js';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'runs/**', '**/*.generated.*', 'test/fixtures/**/*.json'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: 'module',
      // Node 20 (no browser code in the repo; vitest's functions are imported, not global).
      globals: globals.node,
    },
    rules: {
      // A leading underscore marks a value kept on purpose (a tuple slot, a destructured key being
      // dropped, an interface parameter the implementation does not need).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  // the layers of src/ and its features (eslint.layers.js)
  layersConfig(boundaries),
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read untyped JSON (journals, transcripts, CLI output, imported configs) and build
      // deliberately malformed inputs; `any` there is the honest type. src/ keeps the rule.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
