// Named semantics flags of a run: what differs between sop's clean behaviour and the quirks of
// Agents 1.0 (docs/agents-v1.md). The loop reads these flags and never a compatibility mode; the
// Agents 1.0 feature (src/features/agents-v1/compat/agents-v1/semantics.ts) sets them.
export interface Semantics {
  /** A new visit of a state starts afresh: begin turn, turn counter and rotation (false: Agents 1.0 keeps them). */
  freshVisit: boolean;
  /** A begin role without a begin_query says " " (Agents 1.0) instead of speaking through the LLM. */
  blankBeginMessage: boolean;
  /** The judge and speaker see the last max_chat_history messages (Agents 1.0), not a window aligned with summary refreshes. */
  slidingControllerWindow: boolean;
  /** Entering a competitive state keeps the run's summary (Agents 1.0: one summary, read by every judge). */
  keepSummaryOnEntry: boolean;
  /** The speaker choice leaves out the speaker's last_prompt and always asks for <end> (Agents 1.0, reference quirk 22). */
  speakerAsksEnd: boolean;
  /** The components' shared memory (extract) is the run's, journaled in checkpoints (false: a plugin keeps the agents' memory). */
  componentMemoryInCheckpoints: boolean;
  /**
   * A summary refresh appends a summary of the messages it folds in to the summary's chunks, and the
   * oldest chunks are merged only when there are more than `summary.max_chunks` (false: Agents 1.0's
   * one running summary, rewritten at each refresh).
   */
  summaryChunks: boolean;
}

export const CLEAN_SEMANTICS: Semantics = {
  freshVisit: true,
  blankBeginMessage: false,
  slidingControllerWindow: false,
  keepSummaryOnEntry: false,
  speakerAsksEnd: false,
  componentMemoryInCheckpoints: true,
  summaryChunks: true,
};
