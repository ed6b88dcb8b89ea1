// OUT/sweep.json: the settings a sweep folder's runs were first made with (the SOP file, the LLM,
// the turn limit, the prices). A later sweep into the same folder skips the runs already done, so
// it warns when its settings differ: `--llm mock` first and `--llm openai` next would otherwise
// keep the mock runs as if they were real ones.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';

export const SETTINGS_FILE = 'sweep.json';

/** The settings that change what a run gives, by the option that sets them. */
export type SweepSettings = Record<string, string | number | undefined>;

/** The differences with the folder's first settings, as "--llm mock (now openai)"; the file is written when missing. */
export function settingsChanges(out: string, now: SweepSettings): string[] {
  const file = join(out, SETTINGS_FILE);
  let before: SweepSettings | undefined;
  if (existsSync(file)) {
    try {
      before = JSON.parse(readFileSync(file, 'utf8')) as SweepSettings;
    } catch {
      before = undefined; // unreadable: written again below
    }
  }
  if (!before || typeof before !== 'object') {
    writeFileAtomic(file, JSON.stringify(now, null, 2) + '\n');
    return [];
  }
  const shown = (v: unknown) => (v === undefined || v === null ? '(default)' : String(v));
  return Object.keys(now)
    .filter((k) => shown(before[k]) !== shown(now[k]))
    .map((k) => `${k} ${shown(before[k])} (now ${shown(now[k])})`);
}
