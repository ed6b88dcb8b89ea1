// Cassettes: replay a recorded (or hand-written) sequence of LLM replies, and record one.
import { lstatSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { InputFileError, fileKind, readInputFile } from '../../shared/io/read-input-file.js';
import { JsonSyntaxError, parseJson } from '../../format/sop/json-source.js';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { writeFailure } from '../../shared/io/disk-full.js';
import { makeRedactor, type Redactor } from '../../shared/util/redact.js';
import { LlmError, estimateUsage } from './types.js';
import type { CallMeta, CallPurpose, ChatOptions, ChatRequest, ChatResponse, LlmProvider, Usage } from './types.js';

export interface CassetteInteraction {
  purpose: CallPurpose;
  state?: string;
  agent?: string;
  /** The call's effect key (calls made at once, e.g. a population step's): replayed by it, not by position. */
  effect?: string;
  response: string;
  model?: string;
  usage?: Usage;
  request?: unknown[];
}

export interface Cassette {
  $schema?: string;
  version: 1;
  /** `recorded: WHAT` names what answered (a local model: its file, size, quantisation, runtime and seed). */
  source: 'recorded' | 'hand-written' | `recorded: ${string}`;
  note?: string;
  sop?: string;
  interactions: CassetteInteraction[];
}

/** Cassettes hold every reply of a run: up to 256 MiB are read. */
export const MAX_CASSETTE_BYTES = 256 * 1024 * 1024;

const PURPOSES = new Set(['agent', 'judge', 'speaker', 'summary', 'tool']);

export function readCassette(file: string): Cassette {
  let text: string;
  try {
    // files: a regular file under the cap (a cassette grows with the run, so its cap is larger)
    text = readInputFile(file, { maxBytes: MAX_CASSETTE_BYTES, what: 'a cassette file' });
  } catch (err) {
    if (!(err instanceof InputFileError)) throw err;
    throw new LlmError(`cassette ${file}: ${err.errno === 'ENOENT' || err.errno === 'EACCES' ? `cannot read (${err.errno})` : err.reason}`);
  }
  let doc: unknown;
  try {
    doc = parseJson(text);
  } catch (err) {
    const at = err instanceof JsonSyntaxError && err.position ? ` (line ${err.position.line}, column ${err.position.column})` : '';
    throw new LlmError(`cassette ${file}: ${(err as Error).message}${at}`);
  }
  const c = doc as Partial<Cassette>;
  if (!c || typeof c !== 'object' || !Array.isArray(c.interactions)) {
    throw new LlmError(`cassette ${file}: /interactions: missing list of interactions`);
  }
  c.interactions.forEach((it, i) => {
    if (!it || typeof it !== 'object' || typeof it.response !== 'string' || !PURPOSES.has(it.purpose)) {
      throw new LlmError(
        `cassette ${file}: /interactions/${i}: needs "purpose" (agent|judge|speaker|summary|tool) and a string "response"`,
      );
    }
  });
  return c as Cassette;
}

function describe(purpose: string, state?: string, agent?: string): string {
  return `${/^[aeiou]/.test(purpose) ? 'an' : 'a'} ${purpose} call${agent ? ` by ${agent}` : ''}${state ? ` in state "${state}"` : ''}`;
}

/**
 * Replays interactions in order; each call must match the next interaction's purpose (and
 * agent/state when given). A call made at once with others (a population step's, with an effect
 * key) takes the interaction recorded under its key instead, wherever it is: such calls may be
 * made in any order (a resumed step makes only those the journal lacks), and the position then
 * moves past the last of them.
 */
export class ReplayProvider implements LlmProvider {
  readonly id = 'replay';
  private cursor = 0;
  readonly cassette: Cassette;
  /** Interactions by effect key (made on first use). */
  private keyed?: Map<string, number>;

  constructor(
    readonly file: string,
    cassette?: Cassette,
  ) {
    this.cassette = cassette ?? readCassette(file);
  }

  /** Index of the next interaction (journaled, so a resumed run continues from it). */
  get position(): number {
    return this.cursor;
  }
  seek(position: number): void {
    this.cursor = position;
  }

  private byEffect(): Map<string, number> {
    if (!this.keyed) {
      this.keyed = new Map();
      this.cassette.interactions.forEach((it, i) => {
        if (typeof it.effect === 'string' && !this.keyed!.has(it.effect)) this.keyed!.set(it.effect, i);
      });
    }
    return this.keyed;
  }

  /** Where a call's interaction is: under its effect key in a cassette that records keys, else the next one. */
  private place(meta: CallMeta): { at: number; keyed: boolean } {
    if (meta.effect === undefined || this.byEffect().size === 0) return { at: this.cursor, keyed: false };
    const at = this.byEffect().get(meta.effect);
    if (at === undefined)
      throw new LlmError(
        `cassette ${this.file}: holds no reply for ${describe(meta.purpose, meta.state, meta.agent)} (turn ${meta.turn}, call ${meta.effect}); was the cassette made for another SOP or settings?`,
      );
    return { at, keyed: true };
  }

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    options.signal?.throwIfAborted(); // an abandoned call gives no reply and uses no interaction
    const { meta } = request;
    const { at, keyed } = this.place(meta);
    const it = this.cassette.interactions[at];
    if (!it) {
      throw new LlmError(
        `cassette ${this.file}: ran out after ${this.cassette.interactions.length} interactions; the run asked for ${describe(meta.purpose, meta.state, meta.agent)} (turn ${meta.turn})`,
      );
    }
    const mismatch =
      it.purpose !== meta.purpose ||
      (it.agent !== undefined && it.agent !== meta.agent) ||
      (it.state !== undefined && it.state !== meta.state);
    if (mismatch) {
      throw new LlmError(
        `cassette ${this.file}: /interactions/${at} is ${describe(it.purpose, it.state, it.agent)}, but the run asked for ${describe(meta.purpose, meta.state, meta.agent)} (turn ${meta.turn}${keyed ? `, call ${meta.effect}` : ''}); was the cassette made for another SOP or settings?`,
      );
    }
    this.cursor = Math.max(this.cursor, at + 1);
    if (request.stream) options.onDelta?.(it.response);
    return { content: it.response, usage: it.usage ?? estimateUsage(request.messages, it.response), model: it.model ?? 'replay' };
  }

  /** A reply the journal held: its interaction is stepped over (one under the call's key, or the next one). */
  reused(request: ChatRequest): void {
    const { meta } = request;
    if (meta.effect === undefined || this.byEffect().size === 0) this.cursor++;
    else {
      const at = this.byEffect().get(meta.effect);
      if (at !== undefined) this.cursor = Math.max(this.cursor, at + 1);
    }
  }
}

/**
 * Wraps a provider and writes every interaction to a cassette file as it happens. Secrets (the
 * values of environment variables named like keys, tokens, passwords) are redacted from the
 * file, in the replies and in the recorded requests alike: a replay sees `[REDACTED]` there.
 *
 * Its `position` is the number of interactions recorded so far (journaled at checkpoints). With
 * `continues` (`sop resume --record FILE`), the interactions FILE already holds are kept: the
 * resumed run seeks to its checkpoint's position, which drops what the killed attempt recorded
 * after it (the resume redoes that turn) and steps over replies it reuses from the journal, and
 * appends what it asks from then on; a reply it reuses from the journal is recorded again from
 * there. So the cassette replays the whole run from its start. Calls made at once (a population
 * step's) are recorded with their effect key, so a replay matches them by key: a resumed step
 * makes its calls in another order than the killed attempt did.
 */
export class RecordingProvider implements LlmProvider {
  readonly id: string;
  private readonly cassette: Cassette;
  /** Every interaction known: recorded, or read from the file being continued. */
  private all: Array<CassetteInteraction | undefined> = [];
  /** How many of `all` count (the rest: a killed attempt's, until the resume passes them). */
  private n = 0;
  /** Interactions of the run before the first one this file holds (a resume recording to another file). */
  private base = 0;
  get paid(): boolean | undefined {
    return this.inner.paid;
  }
  get free(): boolean | undefined {
    return this.inner.free;
  }

  constructor(
    private readonly inner: LlmProvider,
    private readonly file: string,
    sopName?: string,
    private readonly redact: Redactor = makeRedactor(),
    o: { continues?: boolean } = {},
  ) {
    this.id = `record(${inner.id})`;
    this.cassette = {
      version: 1,
      source: 'recorded',
      note: `Recorded from the ${inner.id} provider by sop run --record.`,
      ...(sopName ? { sop: sopName } : {}),
      interactions: [],
    };
    mkdirSync(dirname(file), { recursive: true }); // --record out/run.json makes out/, as --out does
    if (o.continues && lstatSync(file, { throwIfNoEntry: false })?.isFile()) {
      // the file is rewritten only once the resumed run records (or seeks back to the start)
      this.all = readCassette(file).interactions;
      this.n = this.all.length;
    } else this.flush();
  }

  get position(): number {
    return this.base + this.n;
  }

  /** The run continues from its `position`-th interaction (a resume's checkpoint, or a reply reused from the journal). */
  seek(position: number): void {
    const at = position - this.base;
    if (at >= 0 && at <= this.all.length) this.n = at;
    else {
      // this file does not hold the run's interactions before this point: it records from here
      this.base = position;
      this.all = [];
      this.n = 0;
      this.cassette.note = `Recorded from the ${this.inner.id} provider by sop resume --record, from the run's interaction ${position}; the earlier ones are not in this file.`;
    }
    if (position === 0) this.flush();
  }

  async chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
    // Its place in the cassette is taken when the call starts, so calls made at once (a
    // population step) are recorded in the order they were asked, whichever answers first.
    this.all.length = this.n; // a killed attempt's interactions past this point are redone
    const at = this.n++;
    this.all.push(undefined);
    let res: ChatResponse;
    try {
      res = await this.inner.chat(request, options);
    } catch (err) {
      if (this.n === at + 1) this.all.length = this.n = at; // the last call asked gave no reply: its place is freed
      throw err;
    }
    this.all[at] = interaction(request, res);
    await this.flushSoon();
    return res;
  }

  /** The flush the replies of one turn of the event loop share (`pending`), and each one awaits. */
  private pending: Promise<void> | undefined;

  /**
   * The file rewritten once for every reply that came in the same turn of the event loop (a
   * population step's calls answer together): a call still returns only once its interaction is
   * in the file, and a failed write fails each of them; rewriting it whole at every reply made
   * recording a step of N calls cost N^2.
   */
  private flushSoon(): Promise<void> {
    this.pending ??= new Promise<void>((resolve, reject) =>
      setImmediate(() => {
        this.pending = undefined;
        try {
          this.flush();
          resolve();
        } catch (err) {
          reject(err);
        }
      }),
    );
    return this.pending;
  }

  /** A reply the resumed run reuses from the journal takes the next place, as if asked (the killed attempt's past it are redone). */
  reused(request: ChatRequest, response: ChatResponse): void {
    this.all.length = this.n;
    this.all.push(interaction(request, response));
    this.n++;
    this.flush();
  }

  private flush(): void {
    // The cassette is replaced whole by a rename: only ever over a regular file (or nothing), never
    // over a device (/dev/null), a FIFO, a socket, a symbolic link or a folder someone put there.
    const st = lstatSync(this.file, { throwIfNoEntry: false });
    if (st && !st.isFile()) {
      throw new LlmError(
        `--record ${this.file}: is ${fileKind(st) ?? 'not a regular file'}, not a regular file; nothing was written (name a new file)`,
      );
    }
    try {
      // up to the first call still waiting for its reply
      const waiting = this.all.indexOf(undefined);
      const what = this.inner.describe;
      const cassette = {
        ...this.cassette,
        ...(what ? { source: `recorded: ${what}` as const } : {}),
        interactions: this.all.slice(0, waiting === -1 || waiting > this.n ? this.n : waiting),
      };
      writeFileAtomic(this.file, this.redact(JSON.stringify(cassette, null, 2)) + '\n');
    } catch (err) {
      throw writeFailure(err, this.file); // files: a full disk names the cassette; the run stops, resumable
    }
  }

  async close(): Promise<void> {
    this.flush();
    await this.inner.close?.();
  }
}

/** A call and its reply as a cassette interaction. */
function interaction(request: ChatRequest, res: ChatResponse): CassetteInteraction {
  const { meta } = request;
  return {
    purpose: meta.purpose,
    state: meta.state,
    ...(meta.agent ? { agent: meta.agent } : {}),
    ...(meta.effect !== undefined ? { effect: meta.effect } : {}),
    response: res.content,
    ...(res.model ? { model: res.model } : {}),
    usage: res.usage,
    request: res.sent ?? request.messages.map((m) => ({ role: m.role, content: m.content })),
  };
}
