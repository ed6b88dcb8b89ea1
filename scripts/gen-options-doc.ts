// npm run docs:options: the table of a run's options in docs/api.md, made from the option table
// (src/api/option-table.ts). test/option-table.test.ts fails while the docs differ from it.
import { readFileSync, writeFileSync } from 'node:fs';
import { withOptionTable } from '../src/apps/cli/option-docs.js';

const file = 'docs/api.md';
const before = readFileSync(file, 'utf8');
const after = withOptionTable(before);
if (after !== before) writeFileSync(file, after);
console.log(after !== before ? `${file}: the table of options made again` : `${file}: the table of options is up to date`);
