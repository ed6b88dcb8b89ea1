// Finding every process a piece of code started, even one that left the process group
// (`setsid sleep 1000 &`, a double fork): each code run gets a unique tag in an environment
// variable, which every process it starts inherits, and /proc/*/environ is scanned for it.
// A process that deliberately starts with a cleared environment (`env -i setsid ...`) escapes the
// tag; if it still holds the code's stdout or stderr it is found by that: the child's ends of the
// pipes are noted at the start (/proc/PID/fd/1 and 2) and /proc/*/fd is scanned for them.
// Linux only (elsewhere nothing is found and the process group kill is all there is); a process
// with a cleared environment and its own output escapes both (use --sandbox, whose PID
// namespace ends with the code).
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export const RUN_TAG_VAR = 'SOP_CODE_RUN';

export function newRunTag(): string {
  return randomUUID();
}

/** Pids of the processes /proc lists, other than this one (none without /proc). */
function otherPids(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  return entries
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => pid !== process.pid);
}

/** SIGKILL every process `find` finds, again until it finds none (one may fork while being found); how many were killed. */
function killFound(find: () => number[]): number {
  const killed = new Set<number>();
  for (let round = 0; round < 10; round++) {
    const pids = find();
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // already gone
      }
    }
  }
  return killed.size;
}

/** Pids of the processes (other than this one) whose environment holds the tag. */
export function taggedProcesses(tag: string): number[] {
  const needle = Buffer.from(`${RUN_TAG_VAR}=${tag}\0`);
  return otherPids().filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/environ`).includes(needle);
    } catch {
      return false; // gone, or not ours to read
    }
  });
}

/** SIGKILL every tagged process, again until none is left. */
export function killTagged(tag: string): number {
  return killFound(() => taggedProcesses(tag));
}

/**
 * The child's stdout and stderr as /proc names them (`socket:[123]`), read just after it started
 * (before it was given any code, so they are still the pipes sop reads).
 */
export function outputEnds(pid: number | undefined): string[] {
  if (pid === undefined) return [];
  const out: string[] = [];
  for (const fd of [1, 2]) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (/^(socket|pipe):\[\d+\]$/.test(target)) out.push(target);
    } catch {
      // gone already, or no /proc
    }
  }
  return out;
}

/** Pids of the processes (other than this one) holding one of `ends` open. */
export function endHolders(ends: readonly string[]): number[] {
  if (ends.length === 0) return [];
  return otherPids().filter((pid) => holds(pid, ends));
}

function holds(pid: number, ends: readonly string[]): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone, or not ours to read
  }
  for (const fd of fds) {
    try {
      if (ends.includes(readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** SIGKILL every process still holding the code's output open (one with a cleared environment included). */
export function killHolders(ends: readonly string[]): number {
  return killFound(() => endHolders(ends));
}
