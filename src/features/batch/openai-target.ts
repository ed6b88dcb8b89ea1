// The OpenAI Batch API as a batch target: the batch file uploaded (`files.create`, purpose
// "batch"), a batch made of it (`batches.create`, 24 h window), its status polled
// (`batches.retrieve`), and once it is over its output and error files read (`files.content`) as
// streams, a line at a time, within a cap on a line and on a file (./result-stream.ts).
// The server is the run's own (its base URL and key, the same the run's provider uses and the user
// consented to); the key goes in the request header only, never in an event or an error.
import { opt, say } from '../../shared/errors.js';
import { Readable } from 'node:stream';
import OpenAI, { APIConnectionError, APIError, toFile } from 'openai';
import { isApiError } from '../../core/llm/api-error.js';
import { LlmError, LlmUnavailableError } from '../../core/llm/types.js';
import type { StepRef } from '../../core/runtime/call-many.js';
import { isObject } from '../../shared/util/is-object.js';
import { BATCH_URL } from './lines.js';
import { readLines, type LineCaps } from './result-stream.js';
import { withOwnSignal } from './wait.js';
import { safeName, type BatchStatus, type BatchTarget, type Submitted } from './target.js';

export interface BatchServer {
  /** The run's server (default: OPENAI_BASE_URL, else OpenAI's). */
  baseURL?: string;
  /** Its API key (read when the first batch is sent: the run's own variable). */
  apiKey?: () => string | undefined;
  /** Per-request timeout, ms (default 120 s). */
  timeoutMs?: number;
  /** The longest result line and result file read (default 8 MiB and 2 GiB). */
  caps?: LineCaps;
}

/** Statuses of a batch that is over. */
const OVER = new Set(['completed', 'failed', 'expired', 'cancelled']);
/** Polls in a row that may fail (connection, HTTP 5xx or 429) before the wait is given up as interrupted. */
const POLL_FAILURES = 8;

export class OpenAiBatchTarget implements BatchTarget {
  readonly name = 'openai';
  private client?: OpenAI;
  private failures = 0;

  constructor(
    private readonly server: BatchServer,
    /** The run, named in the batch's metadata (seen in the provider's dashboard). */
    private readonly runId: string,
  ) {}

  private api(): OpenAI {
    if (!this.client) {
      const baseURL = this.server.baseURL ?? process.env.OPENAI_BASE_URL;
      const apiKey = this.server.apiKey?.() ?? process.env.OPENAI_API_KEY;
      if (!apiKey && !baseURL)
        throw new LlmError(say`batch mode: no OpenAI API key (set OPENAI_API_KEY, or give ${opt('baseUrl')} for a server of your own)`);
      this.client = new OpenAI({
        apiKey: apiKey || 'no-key',
        baseURL: baseURL || undefined,
        timeout: this.server.timeoutMs ?? 120_000,
        maxRetries: 2,
        logLevel: 'off',
      });
    }
    return this.client;
  }

  async submit(file: string, step: StepRef): Promise<Submitted> {
    const api = this.api();
    try {
      const upload = await api.files.create({
        file: await toFile(Buffer.from(file, 'utf8'), `${safeName(step)}.jsonl`, { type: 'application/jsonl' }),
        purpose: 'batch',
      });
      // not retried: a batch made whose answer was lost would be paid for twice
      const batch = await api.batches.create(
        {
          input_file_id: upload.id,
          endpoint: BATCH_URL,
          completion_window: '24h',
          metadata: { sop_run: this.runId.slice(0, 500), sop_step: `${step.state}#${step.visit}:${step.step}`.slice(0, 500) },
        },
        { maxRetries: 0 },
      );
      // a server's reply: the id is journaled, shown and sent back, so it must look like one
      if (typeof batch.id !== 'string' || !/^[\w.:-]{1,200}$/.test(batch.id))
        throw new LlmError(`${api.baseURL} answered the batch creation without a batch id (letters, digits, _ . : -)`);
      return { target: 'openai', id: batch.id, input: upload.id };
    } catch (err) {
      throw failure(err, `sending the batch of state "${step.state}" step ${step.step} to ${api.baseURL}`);
    }
  }

  async poll(batch: Submitted, _ids: ReadonlySet<string>, signal?: AbortSignal): Promise<BatchStatus> {
    const api = this.api();
    let b: unknown;
    try {
      b = await withOwnSignal(signal, (own) => api.batches.retrieve(batch.id, { signal: own }));
      this.failures = 0;
    } catch (err) {
      if (signal?.aborted) throw err;
      // a server that is briefly away: asked again at the next poll
      if (transient(err) && ++this.failures < POLL_FAILURES) return { status: 'unreachable' };
      throw failure(err, `asking ${api.baseURL} about batch ${batch.id}`);
    }
    if (!isObject(b) || typeof b.status !== 'string')
      throw new LlmError(`${api.baseURL} answered about batch ${batch.id} without a status`);
    const counts = isObject(b.request_counts) ? b.request_counts : {};
    const out: BatchStatus = {
      status: b.status.slice(0, 40),
      ...(typeof counts.completed === 'number' ? { completed: counts.completed } : {}),
      ...(typeof counts.failed === 'number' ? { failed: counts.failed } : {}),
    };
    if (!OVER.has(b.status)) return out;
    // over: its results (an expired or cancelled batch keeps those it finished), read when the dispatch asks
    const files = [b.output_file_id, b.error_file_id].filter((f): f is string => typeof f === 'string' && f !== '');
    const read = async (onLine: (line: string) => void): Promise<void> => {
      for (const f of files) {
        const what = `file ${f} of batch ${batch.id}`;
        try {
          await withOwnSignal(signal, async (own) => {
            const res = await api.files.content(f, { signal: own });
            if (!res.body) return;
            const chunks = Readable.fromWeb(res.body as Parameters<typeof Readable.fromWeb>[0]);
            try {
              await readLines(chunks, onLine, { what, partialLast: 'line', ...this.server.caps });
            } finally {
              chunks.destroy(); // a file not read to its end is not downloaded further
            }
          });
        } catch (err) {
          if (err instanceof LlmError) throw err;
          throw failure(err, `reading ${what} from ${api.baseURL}`);
        }
      }
    };
    const problem =
      b.status === 'completed'
        ? undefined
        : `batch ${batch.id} ${b.status}${b.status === 'failed' ? `: ${batchErrors(b.errors)}` : b.status === 'expired' ? ' (not done within its 24 h window)' : ''}`;
    return { ...out, ended: { read, ...(problem ? { problem } : {}) } };
  }
}

/** The errors of a failed batch (its validation errors), in one line. */
function batchErrors(errors: unknown): string {
  const data = isObject(errors) && Array.isArray(errors.data) ? (errors.data as unknown[]) : [];
  const said = data
    .filter(isObject)
    .slice(0, 3)
    .map(
      (e) => `${typeof e.line === 'number' ? `line ${e.line}: ` : ''}${typeof e.message === 'string' ? e.message : String(e.code ?? '')}`,
    );
  return said.length ? said.join('; ').slice(0, 400) : 'the server gave no reason';
}

const transient = (err: unknown): boolean =>
  err instanceof APIConnectionError || (err instanceof APIError && (err.status === 429 || (err.status ?? 0) >= 500));

/** An error of the Batch API as the run's error: one the run may resume after (unreachable), or not. */
function failure(err: unknown, what: string): Error {
  if (err instanceof LlmError) return err;
  if (isApiError(err) && !(err instanceof APIConnectionError)) {
    const said = err.message
      .replace(/^\d{3}\s+/, '')
      .replace(/\s+/g, ' ')
      .slice(0, 200);
    if (err.status === 401) return new LlmError(`${what}: the server refused the API key (HTTP 401)`, false, 401);
    if (transient(err)) return new LlmUnavailableError(`${what}: HTTP ${err.status}: ${said}`, err.status);
    return new LlmError(`${what}: HTTP ${err.status ?? 0}: ${said}`, false, err.status);
  }
  if (err instanceof APIConnectionError) return new LlmUnavailableError(`${what}: connection failed`);
  return err instanceof Error ? err : new Error(String(err));
}
