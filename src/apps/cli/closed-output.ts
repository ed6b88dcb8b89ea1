// A reader that goes away (`sop show RUN | head`) closes the pipe under stdout or stderr: later
// writes fail with EPIPE. That is not an error of the command: its output is simply no longer
// wanted. The command goes on (a run still finishes and journals everything) and writes nothing
// more there, instead of dying with a stack trace.
export function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
      throw err;
    });
  }
}
