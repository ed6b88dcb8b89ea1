// Generates, from schemas/sop.schema.json (the one source of truth for the SOP format):
// - src/sop/schema.generated.ts: the schema as a TS const, for json-schema-to-ts FromSchema types;
// - src/sop/sop-validator.generated.js (+ .d.ts, and a copy in dist/): ajv's standalone
//   validator, so the CLI does not compile the schema at every start; the same for cassettes
//   (src/llm/cassette-validator.generated.js from schemas/cassette.schema.json).
// Generated files are not committed; `npm run build` (and so `npm ci`) makes them.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const write = (rel, text) => {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
};

const schema = JSON.parse(readFileSync(join(root, 'schemas/sop.schema.json'), 'utf8'));
write('src/sop/schema.generated.ts',
  '// GENERATED from schemas/sop.schema.json by scripts/gen-schema.mjs. Do not edit: edit the JSON schema.\n' +
  `export const sopSchema = ${JSON.stringify(schema, null, 2)} as const;\n`);

// ajv standalone validators (options must match what src/sop/validate.ts expects of the errors).
function generateValidator(schemaFile, outRel) {
  const schema = JSON.parse(readFileSync(join(root, schemaFile), 'utf8'));
  const ajv = new Ajv({ allErrors: true, verbose: true, strict: false, code: { source: true, esm: true } });
  const validate = ajv.compile(schema);
  // ajv's ESM output still require()s its runtime helpers: turn those into imports.
  const imports = [];
  const body = standaloneCode.default(ajv, validate).replace(/require\("([^"]+)"\)/g, (_, mod) => {
    const name = `__runtime${imports.length}`;
    // CommonJS interop differs between Node (module.exports) and bundlers (exports.default).
    imports.push(`import * as ${name}_ns from "${mod}.js";\n` +
      `const ${name} = { default: typeof ${name}_ns.default === "function" ? ${name}_ns.default : ${name}_ns.default.default };`);
    return name;
  });
  const code = `// GENERATED from ${schemaFile} by scripts/gen-schema.mjs. Do not edit.\n` +
    imports.join('\n') + '\n' + body.replace(/^"use strict";/, '');
  write(`${outRel}.js`, code);
  write(`dist/${outRel}.js`, code);
  write(`${outRel}.d.ts`, "import type { ValidateFunction } from 'ajv';\ndeclare const validate: ValidateFunction;\nexport default validate;\n");
}
generateValidator('schemas/sop.schema.json', 'src/sop/sop-validator.generated');
generateValidator('schemas/cassette.schema.json', 'src/llm/cassette-validator.generated');
