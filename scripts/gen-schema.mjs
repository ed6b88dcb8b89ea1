// Generates src/sop/schema.generated.ts from schemas/sop.schema.json so that the
// TypeScript types (json-schema-to-ts FromSchema) and ajv use the very same schema.
// schemas/sop.schema.json stays the one source of truth; the generated file is not committed.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const schemas = [
  ['schemas/sop.schema.json', 'sopSchema', 'src/sop/schema.generated.ts'],
];
for (const [src, name, out] of schemas) {
  const schema = JSON.parse(readFileSync(join(root, src), 'utf8'));
  const text =
    `// GENERATED from ${src} by scripts/gen-schema.mjs. Do not edit: edit the JSON schema.\n` +
    `export const ${name} = ${JSON.stringify(schema, null, 2)} as const;\n`;
  mkdirSync(dirname(join(root, out)), { recursive: true });
  writeFileSync(join(root, out), text);
}
