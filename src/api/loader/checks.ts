// The checks of the layers above the format that every loaded SOP goes through: the commands of
// its states (executors, their settings and arguments; MCP grants and servers) and its population states (data, world,
// expressions). src/format/sop/ takes them as a parameter.
import { commandDiagnostics } from '../../core/commands/commands.js';
import { BUILTIN_EXECUTORS } from './executors.js';
import { mcpDiagnostics } from '../../features/mcp/checks.js';
import { populationDiagnostics } from '../../features/population/validate-state.js';
import type { SopCheck } from '../../format/sop/validate.js';

export const SOP_CHECKS: readonly SopCheck[] = [
  (sop) => mcpDiagnostics(sop),
  (sop) => commandDiagnostics(sop, { executors: BUILTIN_EXECUTORS }),
  (sop, file) => populationDiagnostics(sop, file),
];
