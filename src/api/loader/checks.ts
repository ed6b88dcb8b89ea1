// The checks of the layers above the format that every loaded SOP goes through: the commands of
// its states (executors, their settings and arguments) and its population states (data, world,
// expressions). src/format/sop/ takes them as a parameter.
import { commandDiagnostics } from '../../features/actions/commands.js';
import { populationDiagnostics } from '../../features/population/validate-state.js';
import type { SopCheck } from '../../format/sop/validate.js';

export const SOP_CHECKS: readonly SopCheck[] = [(sop) => commandDiagnostics(sop), (sop, file) => populationDiagnostics(sop, file)];
