// Issue 24 acceptance: `npm run lint` fails on an import that breaks the layer direction or joins
// two features (eslint.layers.js). ESLint lints probe files that are never written: each is a
// source text linted as if it stood at a path under src/. A probe names what it imports by its
// path in the repository (`from(probe, target)`), so the probes hold wherever the folders are.
import { dirname, relative } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

// A probe is in no tsconfig project, so the type-aware rules (which need one) are off for it; the
// layer rules read imports only.
const eslint = new ESLint({ cwd: process.cwd(), overrideConfig: [{ files: ['**/*.ts'], ...tseslint.configs.disableTypeChecked }] });

/** The module specifier of `target` (a .ts file under src/) in a probe at `probe`. */
function from(probe: string, target: string): string {
  const rel = relative(dirname(probe), target).replace(/\.ts$/, '.js');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

async function layerErrors(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.filter((m) => m.ruleId?.startsWith('boundaries/')).map((m) => m.message);
}

describe('the layers of src/ are enforced by the linter', () => {
  it('the core may not import a feature', async () => {
    const probe = 'src/core/runtime/zz-probe.ts';
    const errors = await layerErrors(
      probe,
      `import { usesActions } from '${from(probe, 'src/features/actions/plugin.ts')}';\nexport const x = usesActions;\n`,
    );
    expect(errors).toEqual([expect.stringContaining('from elements of type "core" to elements of type "feature:actions"')]);
  });

  it('one feature may not import another', async () => {
    const probe = 'src/features/cost/zz-probe.ts';
    const errors = await layerErrors(
      probe,
      `import { mcpServers } from '${from(probe, 'src/features/mcp/config.ts')}';\nexport const x = mcpServers;\n`,
    );
    expect(errors).toEqual([expect.stringContaining('from elements of type "feature:cost" to elements of type "feature:mcp"')]);
  });

  it('the format may not import the core, and an app may import anything below it', async () => {
    const format = 'src/format/sop/zz-probe.ts';
    const app = 'src/apps/cli/zz-probe.ts';
    expect(
      await layerErrors(format, `import { RunLoop } from '${from(format, 'src/core/runtime/run-loop.ts')}';\nexport const x = RunLoop;\n`),
    ).toHaveLength(1);
    expect(
      await layerErrors(app, `import { Run } from '${from(app, 'src/api/engine/run-with-features.ts')}';\nexport const x = Run;\n`),
    ).toEqual([]);
  });

  it('a feature may import the layers below it', async () => {
    const probe = 'src/features/cost/zz-probe.ts';
    const errors = from(probe, 'src/shared/errors.ts');
    const source =
      `import { EngineError } from '${errors}';\nimport { RunSignal } from '${errors}';\n` +
      `import type { RunPlugin } from '${from(probe, 'src/core/runtime/hooks.ts')}';\nexport type P = RunPlugin;\nexport const x = [EngineError, RunSignal];\n`;
    expect(await layerErrors(probe, source)).toEqual([]);
  });

  it('a file in a folder no layer names is refused', async () => {
    expect(await layerErrors('src/newthing/zz-probe.ts', 'export const x = 1;\n')).toEqual([
      expect.stringContaining('does not belong to any known element'),
    ]);
  });
});
