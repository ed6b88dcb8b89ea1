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
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue; // gone, or not ours to read
    }
    for (const fd of fds) {
      let target: string;
      try {
        target = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (ends.includes(target)) {
        out.push(pid);
        break;
      }
    }
  }
  return out;
}

/** SIGKILL every process still holding the code's output open (one with a cleared environment included). */
export function killHolders(ends: readonly string[]): number {
  const killed = new Set<number>();
  for (let round = 0; round < 10; round++) {
    const pids = endHolders(ends);
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
