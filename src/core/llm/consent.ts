// Where a SOP file may send LLM calls. A SOP names servers (llm.base_url, at any level) and the
// variables holding their keys (llm.api_key_env; the SOP's own server gets OPENAI_API_KEY when it
// names none): a SOP downloaded from somewhere could send the user's key, and the prompts, to a
// host of its choosing. So a server the SOP names gets a request only with the user's consent, as
// an MCP server starts only with their approval (src/features/mcp/approval.ts):
//   - the user's own server: --base-url (which replaces every server of the SOP), else
//     OPENAI_BASE_URL, else OpenAI's, with OPENAI_API_KEY or no key;
//   - --allow-base-url URL: URL, with OPENAI_API_KEY (as --base-url URL would send it) or no key;
//   - --allow-base-url-env URL=VAR: URL, with the key in VAR (or no key);
//   - the allow file: {"llm": [{"base_url": URL, "env": [VAR, ...]}]} (src/core/io/allow-file.ts);
//   - a person at a terminal, shown the server, its host and the variable, who says yes.
// Consent names the variable too: a server receives only the variable consented for it. --yes
// gives none. The mock and replay providers send nothing and need none.
import { EngineError } from '../../shared/errors.js';
import { allowFile, allowFileEntries, entryObject } from '../io/allow-file.js';
import type { Sop } from '../../format/sop/types.js';
import { sopEndpoints } from './endpoints.js';
import type { LlmEndpoint } from './types.js';

/** The server of the openai client when none is named. */
export const DEFAULT_SERVER = 'https://api.openai.com/v1';
/** The variable of the user's own key (the openai client reads it when no key is given). */
export const USER_KEY = 'OPENAI_API_KEY';

/** Where calls go: the server, and the variable whose value goes with them as the API key (none: no key). */
export interface LlmDestination {
  url: string;
  keyVar?: string;
}

export interface LlmAllowEntry {
  /** The server, as serverKey gives it. */
  server: string;
  /** Variables whose value the server may be sent as its key. */
  env: string[];
  /** Where the entry comes from, for messages. */
  from: string;
}

export interface LlmConsentOptions {
  /** --allow-base-url(-env) entries and the allow file (a function: read at the first check). */
  allow?: LlmAllowEntry[] | (() => LlmAllowEntry[]);
  /** A person at a terminal: shown `text`, says yes or no. */
  ask?: (text: string) => Promise<boolean>;
  env?: NodeJS.ProcessEnv;
}

export class LlmConsentError extends EngineError {
  constructor(message: string) {
    super(message, 'LLM_CONSENT');
    this.name = 'LlmConsentError';
  }
}

const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A server as compared for consent: parsed and printed again, without credentials or a trailing slash. */
export function serverKey(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href.replace(/\/+$/, '');
  } catch {
    return url.replace(/\/+$/, '');
  }
}

/** The host[:port] of a server, for messages. */
export function serverHost(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/** The user's own server: OPENAI_BASE_URL, else OpenAI's. */
export function userServer(env: NodeJS.ProcessEnv = process.env): string {
  return env.OPENAI_BASE_URL || DEFAULT_SERVER;
}

/** The run's own server (the SOP's llm.base_url, or the user's) and its key (llm.api_key_env, else OPENAI_API_KEY). */
export function mainDestination(baseURL: string | undefined, apiKeyEnv: string | undefined, env = process.env): LlmDestination {
  return { url: baseURL || userServer(env), keyVar: apiKeyEnv ?? USER_KEY };
}

/** The server of an LLM block that names its own (src/core/llm/endpoints.ts): its key only from its api_key_env. */
export function endpointDestination(e: LlmEndpoint, mainBaseURL: string | undefined, env = process.env): LlmDestination {
  return { url: e.baseURL ?? (mainBaseURL || userServer(env)), ...(e.apiKeyEnv !== undefined ? { keyVar: e.apiKeyEnv } : {}) };
}

/** Calls the user sends there themselves: their own server with their own key, or no key. */
export function isUsersOwn(d: LlmDestination, env: NodeJS.ProcessEnv = process.env): boolean {
  return serverKey(d.url) === serverKey(userServer(env)) && (d.keyVar === undefined || d.keyVar === USER_KEY);
}

function checkUrl(url: string, flag: string): string {
  if (!/^https?:\/\/[^/]/.test(url)) throw new LlmConsentError(`${flag} "${url}": give the server's URL, http(s)://HOST[:PORT]/PATH`);
  return serverKey(url);
}

/**
 * The entries of `--allow-base-url URL` (URL, with OPENAI_API_KEY) and `--allow-base-url-env URL=VAR`
 * (URL, with VAR: the last `=` splits them).
 */
export function cliLlmAllowEntries(urls: readonly string[] = [], pairs: readonly string[] = []): LlmAllowEntry[] {
  const out: LlmAllowEntry[] = urls.map((u) => ({ server: checkUrl(u, '--allow-base-url'), env: [USER_KEY], from: '--allow-base-url' }));
  for (const p of pairs) {
    const eq = p.lastIndexOf('=');
    const v = p.slice(eq + 1);
    if (eq <= 0 || !VAR_NAME.test(v))
      throw new LlmConsentError(`--allow-base-url-env "${p}" must look like URL=VARIABLE, e.g. https://api.example.com/v1=EXAMPLE_API_KEY`);
    out.push({ server: checkUrl(p.slice(0, eq), '--allow-base-url-env'), env: [v], from: '--allow-base-url-env' });
  }
  return out;
}

const KEYS = new Set(['base_url', 'env']);

/** The "llm" entries of the user's allow file (none when there is no file); one clear line for a bad file. */
export function fileLlmAllowEntries(file = allowFile()): LlmAllowEntry[] {
  const error = (m: string) => new LlmConsentError(m);
  return allowFileEntries('llm', file, error, (raw, where) => {
    const r = entryObject(raw, where, KEYS, error);
    if (typeof r.base_url !== 'string' || !/^https?:\/\/[^/]/.test(r.base_url))
      throw new LlmConsentError(`${where}: "base_url" must be the server's URL, http(s)://HOST[:PORT]/PATH`);
    if (r.env !== undefined && !(Array.isArray(r.env) && r.env.every((v) => typeof v === 'string' && VAR_NAME.test(v))))
      throw new LlmConsentError(`${where}: "env" must be a list of variable names`);
    return { server: serverKey(r.base_url), env: (r.env as string[] | undefined) ?? [], from: file };
  });
}

/** The allow-file entry that would allow a destination (told in a refusal, to copy into the file). */
export function suggestedLlmEntry(d: LlmDestination): string {
  return JSON.stringify({ base_url: serverKey(d.url), ...(d.keyVar !== undefined ? { env: [d.keyVar] } : {}) });
}

/** The flag that would allow a destination. */
export function allowFlag(d: LlmDestination): string {
  const url = serverKey(d.url);
  return d.keyVar === undefined || d.keyVar === USER_KEY ? `--allow-base-url ${url}` : `--allow-base-url-env ${url}=${d.keyVar}`;
}

/** What it sends, in words: "the key in VAR" or "no key". */
function keyWords(d: LlmDestination): string {
  return d.keyVar === undefined ? 'no API key' : `the API key in ${d.keyVar}`;
}

/** The question asked at a terminal. */
export function consentQuestion(d: LlmDestination): string {
  return [
    `The SOP sends LLM calls (its prompts, with what the run holds) to a server it names:`,
    `  server ${serverKey(d.url)}`,
    `  host ${serverHost(d.url)}`,
    `  with ${keyWords(d)}`,
    'Send them there?',
  ].join('\n');
}

/** Consent to the destinations of one invocation: each is judged once, before its first request. */
export class LlmConsent {
  private readonly decided = new Map<string, Promise<void>>();
  private entries: LlmAllowEntry[] | undefined;
  /** What a person at the terminal allowed (handed on to a sweep's worker threads). */
  readonly approved: LlmAllowEntry[] = [];

  constructor(private readonly o: LlmConsentOptions = {}) {}

  private allowEntries(): LlmAllowEntry[] {
    if (this.entries === undefined) this.entries = typeof this.o.allow === 'function' ? this.o.allow() : (this.o.allow ?? []);
    return this.entries;
  }

  /** Allowed without asking: the user's own, or an entry names this server (and this variable). */
  allowedWithoutAsking(d: LlmDestination): boolean {
    const env = this.o.env ?? process.env;
    if (isUsersOwn(d, env)) return true;
    const server = serverKey(d.url);
    return this.allowEntries().some((e) => e.server === server && (d.keyVar === undefined || e.env.includes(d.keyVar)));
  }

  /** Resolves when calls may go to `d`; LlmConsentError (one line: what, where, how to allow it) when not. */
  check(d: LlmDestination): Promise<void> {
    const id = `${serverKey(d.url)}\u0000${d.keyVar ?? ''}`;
    let p = this.decided.get(id);
    if (p === undefined) {
      p = this.decide(d);
      this.decided.set(id, p);
    }
    return p;
  }

  private async decide(d: LlmDestination): Promise<void> {
    let allowed: boolean;
    try {
      allowed = this.allowedWithoutAsking(d);
    } catch (err) {
      throw new LlmConsentError(`no LLM call was sent to ${serverHost(d.url)}: ${(err as Error).message}`);
    }
    if (allowed) return;
    const what = `the SOP sends its LLM calls to ${serverKey(d.url)} (host ${serverHost(d.url)}) with ${keyWords(d)}`;
    if (this.o.ask) {
      if (await this.o.ask(consentQuestion(d))) {
        this.approved.push({ server: serverKey(d.url), env: d.keyVar !== undefined ? [d.keyVar] : [], from: 'the terminal' });
        return;
      }
      throw new LlmConsentError(`${what}; you did not allow it, so nothing was sent`);
    }
    throw new LlmConsentError(
      `${what}, which you have not allowed, and there is no terminal to ask; nothing was sent. ` +
        `Allow it with ${allowFlag(d)}, or add ${suggestedLlmEntry(d)} to "llm" in ${allowFile()}, or give --base-url (docs/tools.md)`,
    );
  }
}

/**
 * What a run of this SOP with the openai provider would send where, without --base-url: its own
 * server and those its LLM blocks name (a sub-flow's are judged when it calls).
 */
export function sopDestinations(sop: Sop, env: NodeJS.ProcessEnv = process.env): LlmDestination[] {
  if (sop.llm?.provider === 'mock' || sop.llm?.provider === 'local' || sop.llm?.provider?.startsWith('replay:')) return [];
  return [
    mainDestination(sop.llm?.base_url, sop.llm?.api_key_env, env),
    ...sopEndpoints(sop).map((e) => endpointDestination(e, sop.llm?.base_url, env)),
  ];
}

/**
 * `sop check` and `sop validate --check-tools` call no LLM: they tell, one line each, the servers
 * a real run of the SOP would need the user's consent for (it would ask at a terminal, or refuse).
 */
export function consentWarnings(sop: Sop, allow: () => LlmAllowEntry[]): string[] {
  const consent = new LlmConsent({ allow });
  return sopDestinations(sop)
    .filter((d) => !consent.allowedWithoutAsking(d))
    .map(
      (d) =>
        `a run with --llm openai sends its LLM calls to ${serverKey(d.url)} (host ${serverHost(d.url)}) with ${keyWords(d)}, ` +
        `which you have not allowed: it will ask at a terminal, else refuse; allow it with ${allowFlag(d)} or in ${allowFile()} (docs/tools.md)`,
    );
}
