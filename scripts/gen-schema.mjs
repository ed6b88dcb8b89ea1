// Generates, from the JSON schemas in schemas/ (the one source of truth for each file format):
// - src/format/sop/schema.generated.ts: the SOP schema as a TS const, for json-schema-to-ts FromSchema types
//   (the same for the task board and world model files, in src/features/scientist/taskboard/ and src/features/scientist/worldmodel/);
// - src/format/sop/sop-validator.generated.js (+ .d.ts, and a copy in dist/): ajv's standalone
//   validator, so the CLI does not compile the schema at every start; the same for cassettes
//   (src/core/llm/cassette-validator.generated.js from schemas/cassette.schema.json), pricing files
//   (src/core/llm/pricing-validator.generated.js from schemas/pricing.schema.json), queued sweep jobs
//   (src/apps/sweep/job-validator.generated.js from schemas/queue-job.schema.json), task boards and
//   world models.
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

function generateConst(schemaFile, outRel, name) {
  const schema = JSON.parse(readFileSync(join(root, schemaFile), 'utf8'));
  write(
    outRel,
    `// GENERATED from ${schemaFile} by scripts/gen-schema.mjs. Do not edit: edit the JSON schema.\n` +
      `export const ${name} = ${JSON.stringify(schema, null, 2)} as const;\n`,
  );
}
generateConst('schemas/sop.schema.json', 'src/format/sop/schema.generated.ts', 'sopSchema');
generateConst('schemas/taskboard.schema.json', 'src/features/scientist/taskboard/schema.generated.ts', 'taskBoardSchema');
generateConst('schemas/worldmodel.schema.json', 'src/features/scientist/worldmodel/schema.generated.ts', 'worldModelSchema');

// ajv standalone validators (options must match what the callers expect of the errors: every
// error, with the failing schema, for the SOP and cassettes, which report them all; the first
// error only for the task board and world model, read with src/shared/util/schema-error.ts).
// `typed` names the schema const whose FromSchema type the validator's type guard narrows to.
function generateValidator(schemaFile, outRel, { allErrors = true, typed } = {}) {
  const schema = JSON.parse(readFileSync(join(root, schemaFile), 'utf8'));
  const ajv = new Ajv({ allErrors, verbose: allErrors, strict: false, code: { source: true, esm: true } });
  const validate = ajv.compile(schema);
  // ajv's ESM output still require()s its runtime helpers: turn those into imports.
  const imports = [];
  const body = standaloneCode.default(ajv, validate).replace(/require\("([^"]+)"\)/g, (_, mod) => {
    const name = `__runtime${imports.length}`;
    // CommonJS interop differs between Node (module.exports) and bundlers (exports.default).
    imports.push(
      `import * as ${name}_ns from "${mod}.js";\n` +
        `const ${name} = { default: typeof ${name}_ns.default === "function" ? ${name}_ns.default : ${name}_ns.default.default };`,
    );
    return name;
  });
  const code =
    `// GENERATED from ${schemaFile} by scripts/gen-schema.mjs. Do not edit.\n` +
    imports.join('\n') +
    '\n' +
    body.replace(/^"use strict";/, '');
  write(`${outRel}.js`, code);
  write(`dist/${outRel}.js`, code);
  write(
    `${outRel}.d.ts`,
    typed
      ? "import type { ValidateFunction } from 'ajv';\nimport type { FromSchema } from 'json-schema-to-ts';\n" +
          `import type { ${typed} } from './schema.generated.js';\n` +
          `declare const validate: ValidateFunction<FromSchema<typeof ${typed}>>;\nexport default validate;\n`
      : "import type { ValidateFunction } from 'ajv';\ndeclare const validate: ValidateFunction;\nexport default validate;\n",
  );
}
generateValidator('schemas/sop.schema.json', 'src/format/sop/sop-validator.generated');
generateValidator('schemas/cassette.schema.json', 'src/core/llm/cassette-validator.generated');
generateValidator('schemas/pricing.schema.json', 'src/core/llm/pricing-validator.generated', { allErrors: false });
generateValidator('schemas/queue-job.schema.json', 'src/apps/sweep/job-validator.generated', { allErrors: false });
generateValidator('schemas/taskboard.schema.json', 'src/features/scientist/taskboard/taskboard-validator.generated', {
  allErrors: false,
  typed: 'taskBoardSchema',
});
generateValidator('schemas/worldmodel.schema.json', 'src/features/scientist/worldmodel/worldmodel-validator.generated', {
  allErrors: false,
  typed: 'worldModelSchema',
});
