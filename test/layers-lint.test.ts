// Issue 24 acceptance: `npm run lint` fails on an import that breaks the layer direction or joins
// two features (eslint.layers.js). ESLint lints probe files that are never written: each is a
// source text linted as if it stood at a path under src/.
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: process.cwd() });

async function layerErrors(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.filter((m) => m.ruleId?.startsWith('boundaries/')).map((m) => m.message);
}

describe('the layers of src/ are enforced by the linter', () => {
  it('the core may not import a feature', async () => {
    const errors = await layerErrors(
      'src/runtime/zz-probe.ts',
      "import { usesActions } from '../actions/plugin.js';\nexport const x = usesActions;\n",
    );
    expect(errors).toEqual([expect.stringContaining('from elements of type "core" to elements of type "feature:actions"')]);
  });

  it('one feature may not import another', async () => {
    const errors = await layerErrors(
      'src/cost/zz-probe.ts',
      "import { mcpServers } from '../mcp/config.js';\nexport const x = mcpServers;\n",
    );
    expect(errors).toEqual([expect.stringContaining('from elements of type "feature:cost" to elements of type "feature:mcp"')]);
  });

  it('the format may not import the core, and an app may import anything below it', async () => {
    expect(
      await layerErrors('src/sop/zz-probe.ts', "import { RunLoop } from '../runtime/run.js';\nexport const x = RunLoop;\n"),
    ).toHaveLength(1);
    expect(await layerErrors('src/cli/zz-probe.ts', "import { Run } from '../engine/run.js';\nexport const x = Run;\n")).toEqual([]);
  });

  it('a feature may import the layers below it', async () => {
    const source =
      "import { EngineError } from '../errors.js';\nimport { RunSignal } from '../errors.js';\nimport type { RunPlugin } from '../runtime/hooks.js';\nexport type P = RunPlugin;\nexport const x = [EngineError, RunSignal];\n";
    expect(await layerErrors('src/cost/zz-probe.ts', source)).toEqual([]);
  });

  it('a file in a folder no layer names is refused', async () => {
    expect(await layerErrors('src/newthing/zz-probe.ts', 'export const x = 1;\n')).toEqual([
      expect.stringContaining('does not belong to any known element'),
    ]);
  });
});
