// The semantics flags of a run under Agents 1.0 compatibility (`compat: "agents-v1"`, docs/agents-v1.md).
import { CLEAN_SEMANTICS, type Semantics } from '../../../../core/runtime/semantics.js';

/** The semantics of a run: clean, or Agents 1.0's quirks. */
export function semanticsFor(compat: 'agents-v1' | undefined): Semantics {
  if (compat !== 'agents-v1') return CLEAN_SEMANTICS;
  return {
    ...CLEAN_SEMANTICS,
    freshVisit: false,
    blankBeginMessage: true,
    slidingControllerWindow: true,
    speakerAsksEnd: true,
    summaryChunks: false,
  };
}
