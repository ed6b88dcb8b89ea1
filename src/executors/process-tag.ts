// Finding every process a piece of code started, even one that left the process group
// (`setsid sleep 1000 &`, a double fork): each code run gets a unique tag in an environment
// variable, which every process it starts inherits, and /proc/*/environ is scanned for it.
// Linux only (elsewhere nothing is found and the process group kill is all there is); a process
// that deliberately starts with a cleared environment escapes it (use --sandbox, whose PID
// namespace ends with the code).
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

export const RUN_TAG_VAR = 'SOP_CODE_RUN';

export function newRunTag(): string {
  return randomUUID();
}

/** Pids of the processes (other than this one) whose environment holds the tag. */
export function taggedProcesses(tag: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = Buffer.from(`${RUN_TAG_VAR}=${tag}\0`);
  const out: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`).includes(needle)) out.push(pid);
    } catch {
      // gone, or not ours to read
    }
  }
  return out;
}

/** SIGKILL every tagged process, again until none is left (one may fork while being found). */
export function killTagged(tag: string): number {
  let killed = 0;
  for (let round = 0; round < 10; round++) {
    const pids = taggedProcesses(tag);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  return killed;
}
