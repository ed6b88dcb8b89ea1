// Writes the synthetic persona file of examples/social-spread/ (personas.csv) and its provenance
// (PERSONAS.md) from declared marginals and a seed, with the library's own generator
// (src/features/population/generate.ts, built into dist/: run `npm run build` first). The same seed gives
// the same bytes, so the committed file can be checked against a fresh run:
//   node scripts/make-personas.mjs                 # rewrites examples/social-spread/
//   node scripts/make-personas.mjs --out DIR       # writes DIR/personas.csv and DIR/PERSONAS.md
// No row describes a real person: names come from the short list below, every other value from
// the marginals, drawn independently per column.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedColumns, generateRows } from '../dist/src/features/population/generate.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? args[outAt + 1] : join(root, 'examples/social-spread');
if (!out) {
  console.error('make-personas: --out needs a folder');
  process.exit(2);
}

/** Synthetic first names (common given names, none tied to a real record). */
const NAMES = [
  'Ada',
  'Ben',
  'Chloe',
  'Dev',
  'Elena',
  'Farid',
  'Grace',
  'Hugo',
  'Ines',
  'Jonas',
  'Kira',
  'Leo',
  'Maya',
  'Nikhil',
  'Olga',
  'Pablo',
  'Quinn',
  'Rosa',
  'Sami',
  'Tara',
  'Umar',
  'Vera',
  'Wen',
  'Ximena',
  'Yusuf',
  'Zoe',
  'Amara',
  'Bruno',
  'Carmen',
  'Diego',
  'Emeka',
  'Fatima',
  'Gus',
  'Hana',
  'Ivan',
  'Jade',
  'Kofi',
  'Lena',
  'Mateo',
  'Nora',
];

/** The declared marginals: the same shape as a SOP's population "generate" source. */
export const PERSONAS = {
  n: 1000,
  seed: 2025,
  columns: {
    name: { choice: NAMES },
    age: { normal: { mean: 41, sd: 14, min: 18, max: 85, round: true } },
    party: { categorical: { left: 0.42, center: 0.2, right: 0.38 } },
    interest: { categorical: { politics: 0.25, sports: 0.2, music: 0.2, tech: 0.2, food: 0.15 } },
    followers: { uniform: { min: 0, max: 500, round: true } },
  },
};

const cell = (v) => {
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

const columns = generatedColumns(PERSONAS, 'id');
const lines = [columns.map(cell).join(',')];
for (const { row } of generateRows(PERSONAS, 'id')) lines.push(columns.map((c) => cell(row[c])).join(','));
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'personas.csv'), lines.join('\n') + '\n');

const marginal = (c) => {
  if (c.choice) return `one of ${c.choice.length} first names, equally likely`;
  if (c.categorical)
    return Object.entries(c.categorical)
      .map(([v, s]) => `${v} ${Math.round(s * 100)}%`)
      .join(', ');
  if (c.uniform) return `uniform from ${c.uniform.min} to ${c.uniform.max}${c.uniform.round ? ', whole numbers' : ''}`;
  const n = c.normal;
  return `normal, mean ${n.mean}, sd ${n.sd}, cut to [${n.min}, ${n.max}]${n.round ? ', rounded' : ''}`;
};
writeFileSync(
  join(out, 'PERSONAS.md'),
  [
    '# personas.csv is synthetic',
    '',
    `\`personas.csv\` holds ${PERSONAS.n.toLocaleString('en-US')} **synthetic** personas. No row describes a real person,`,
    'and the file is not a sample of any survey or platform. It was written by',
    '`node scripts/make-personas.mjs` (after `npm run build`) with the population generator of',
    `\`src/features/population/generate.ts\`, seed ${PERSONAS.seed}, from these declared marginals, each column drawn`,
    'independently of the others:',
    '',
    '| column | marginal |',
    '| --- | --- |',
    "| id | a0, a1, ... (the generator's ids) |",
    ...Object.entries(PERSONAS.columns).map(([name, c]) => `| ${name} | ${marginal(c)} |`),
    '',
    'Running the script again writes the same bytes. To change the personas, edit the marginals',
    'in the script and run it again; see [docs/population.md](../../docs/population.md).',
    '',
  ].join('\n'),
);
console.log(`wrote ${join(out, 'personas.csv')} (${PERSONAS.n} synthetic personas) and PERSONAS.md`);
