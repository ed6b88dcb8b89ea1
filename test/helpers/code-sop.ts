// The smallest SOP that runs code: one agent in a command state with run_code (python) and
// finish, then a final state. Tests of approvals, the sandbox, secrets and Ctrl-C during code use it.
import type { Sop } from '../../src/format/sop/types.js';

export function codeSop(name: string, agent = 'Sam'): Sop {
  return {
    name,
    environment: { summary: { enabled: false } },
    agents: { [agent]: { roles: { work: 'Coder' } } },
    root: 'work',
    states: {
      work: {
        roles: ['Coder'],
        components: { Coder: { task: 'Run code, then finish.' } },
        commands: { run_code: { executor: 'code', settings: { language: 'python' } }, finish: { executor: 'finish' } },
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
}
