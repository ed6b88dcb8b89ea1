// How a queue worker (sop worker, sop worker --shards) stops: the first SIGINT or SIGTERM says
// what happens to the work in progress, aborts it and closes the worker; a second one quits at once.
export interface WorkerSignals {
  /** Whether a signal asked the worker to stop (its exit code is then 130). */
  stopped(): boolean;
  /** The handlers removed, once the worker has closed. */
  release(): void;
}

export function stopOnSignals(o: {
  say: string;
  stop: AbortController;
  close: () => Promise<unknown>;
  err: (text: string) => void;
}): WorkerSignals {
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals > 1) process.exit(130);
    o.err(`Stopping: ${o.say} (Ctrl-C again to quit at once).\n`);
    o.stop.abort();
    void o.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stopped: () => signals > 0,
    release() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
