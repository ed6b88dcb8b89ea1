// sop view [RUN_DIR | --out DIR]: a local web viewer of run folders (src/apps/view). It prints the
// URL (with its token) on stdout, tries to open a browser unless --no-open, and serves until
// interrupted.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import { findRuns } from '../view/runs.js';
import { isSweepFolder } from '../view/sweep.js';
import { startViewServer } from '../view/server.js';

export interface ViewCommandOptions {
  dir?: string;
  out: string;
  host: string;
  port: number;
  open: boolean;
  /** Audiences: open the run's transcript as this agent may see it. */
  as?: string;
}

function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {}); // no browser opener here: the printed URL is enough
    child.unref();
  } catch {
    // ignored, as above
  }
}

export async function viewCommand(o: ViewCommandOptions): Promise<number> {
  const target = o.dir ?? o.out;
  if (!existsSync(target) || !statSync(target).isDirectory()) {
    process.stderr.write(
      `error: ${target}: no such folder${o.dir ? ' (give a run folder, or --out with the folder of run folders)' : ''}\n`,
    );
    return 1;
  }
  const sweep = isSweepFolder(target) ? target : undefined;
  if (o.dir && !sweep && !existsSync(join(o.dir, JOURNAL_FILE))) {
    process.stderr.write(`error: ${o.dir}: no ${JOURNAL_FILE} here; is it a run folder (sop runs lists them)?\n`);
    return 1;
  }
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535) {
    process.stderr.write(`error: --port must be a whole number from 0 to 65535 (0: any free port)\n`);
    return 2;
  }
  // a sweep's folder: its runs are under runs/, and the list leads with the metrics across them
  const single = o.dir !== undefined && !sweep ? findRuns(target, true) : undefined;
  const runs = single ? () => single : () => findRuns(sweep ? join(target, 'runs') : target, false);
  let server;
  try {
    server = await startViewServer({ runs, host: o.host, port: o.port, ...(sweep ? { sweep } : {}) });
  } catch (err) {
    process.stderr.write(`error: cannot listen on ${o.host}:${o.port}: ${(err as Error).message}\n`);
    return 1;
  }
  const url = single ? server.runUrl(single[0]!.id) + (o.as !== undefined ? `&as=${encodeURIComponent(o.as)}` : '') : server.url;
  process.stdout.write(`${url}\n`);
  if (o.host !== '127.0.0.1' && o.host !== 'localhost' && o.host !== '::1')
    process.stderr.write(`warning: serving on ${o.host}: anyone who can reach it and has the URL can read these runs\n`);
  if (o.open) openBrowser(url);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}
