import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layersPlugin } from './eslint-layers.js';

export default tseslint.config(
  { ignores: ['node_modules', 'output', 'coverage', 'dist'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.mjs', '**/*.js'],
    ignores: ['public/**'],
    languageOptions: { globals: { process: 'readonly', setInterval: 'readonly', setTimeout: 'readonly', console: 'readonly' } },
  },
  {
    // The playground page's browser modules (no build step): the browser's globals, not Node's.
    files: ['public/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'AbortController', 'FormData', 'URL', 'cancelAnimationFrame', 'document', 'fetch', 'localStorage', 'location',
          'navigator', 'performance', 'requestAnimationFrame',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
  {
    // The folder layering of src/: which folder may import which (eslint-layers.js holds the table).
    files: ['src/**/*.ts'],
    plugins: { layers: layersPlugin },
    rules: { 'layers/imports': 'error' },
  },
  {
    // The front doors call the use cases (app.voices, app.speech, app.jobRequests): not what is composed beneath them.
    files: ['src/http/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: 'MemberExpression[property.name=/^(engines|synthesizer|maker|executor|sentenceCache|jobs)$/]',
          message: 'A front door calls a use case (app.voices, app.speech, app.jobRequests), not the services beneath it (src/usecases/).',
        },
        {
          selector: 'ObjectPattern > Property[key.name=/^(engines|synthesizer|maker|executor|sentenceCache|jobs)$/]',
          message: 'A front door calls a use case (app.voices, app.speech, app.jobRequests), not the services beneath it (src/usecases/).',
        },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
);
