// The exit codes of sop run, resume and fork (README "Exit codes"). A run that stopped as
// `interrupted` is resumable; why it stopped decides its code, so a script can tell Ctrl-C from a
// run that waits for a person or for the LLM.

export const EXIT = {
  /** finished, or stopped by --max-turns or a budget */
  ok: 0,
  /** failed, or refused (invalid input, a missing file, an approval refused up front) */
  failed: 1,
  /** bad usage of the command line */
  usage: 2,
  /** stopped for a person: an approval nobody could give (no terminal, an answers file), answers that ran out */
  person: 3,
  /** stopped for the LLM or the disk: a server that stayed unreachable after the retries, a full disk */
  unavailable: 75,
  /** stopped by Ctrl-C */
  interrupted: 130,
} as const;

/** Stops that wait for a person (src/core/io/human.ts, src/features/journal/effects.ts). */
const FOR_A_PERSON = new Set(['ApprovalNeededError', 'NoMoreAnswersError', 'EffectNotApprovedError']);

/** The exit code of a run that stopped as `interrupted`. */
export function interruptedExit(error: Error | undefined, ctrlC: boolean): number {
  if (ctrlC || error?.name === 'AnswerInterruptedError') return EXIT.interrupted; // Ctrl-C, at a question too
  if (error && FOR_A_PERSON.has(error.name)) return EXIT.person;
  return EXIT.unavailable;
}
