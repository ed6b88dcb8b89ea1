// Secrets never reach a file, a prompt or stdout. A secret is the value of an environment
// variable named like a key, token, secret, password or credential, a JWT, a DSN or a webhook
// URL (MYSQL_PWD and PGPASSWORD too, not PWD; or named with --redact),
// and a credential inside a URL (`postgres://user:PASSWORD@host`, `?api-key=KEY`) found in any
// variable or in --base-url. Each is replaced wherever it appears, in the forms code could
// print it in: raw, upper- or lower-cased, reversed, JSON-escaped, URL-encoded, hex and base64
// (at every byte alignment, standard and URL-safe alphabet).

const SECRET_NAME = /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASS|PAT|CREDENTIALS?|JWT|DSN|WEBHOOK(_URL)?)$|PASSWORD$|PASSWD$|._PWD$/i;
/** sop's own secrets, named here whatever the pattern above becomes: the key queued jobs are signed with. */
const SOP_SECRETS = new Set(['SOP_QUEUE_SECRET']);
/** Query parameters of a URL that carry a credential (`?api-key=`, `&token=`, `&sig=`...). */
const SECRET_PARAM = /(key|token|secret|pass|pwd|pat|credential|auth|sig)/i;
/** Shorter values are not redacted: they would match ordinary text. */
export const MIN_SECRET_LENGTH = 6;
export const REDACTED = '[REDACTED]';

/** Names given with --redact, and URLs (--base-url) whose credentials are secret, for this process. */
const configured = { names: new Set<string>(), urls: new Set<string>() };

/** Add variable names (--redact NAME) and URLs (--base-url) whose values are secret. */
export function configureSecrets(o: { names?: readonly string[]; urls?: ReadonlyArray<string | undefined> }): void {
  for (const n of o.names ?? []) if (n.trim()) configured.names.add(n.trim());
  for (const u of o.urls ?? []) if (u) configured.urls.add(u);
}

/** Names added with --redact so far (recorded in a run's launch settings). */
export function configuredSecretNames(): string[] {
  return [...configured.names];
}

/** Whether an environment variable holds a secret by its name (not given to code either). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) || SOP_SECRETS.has(name) || configured.names.has(name);
}

const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s'"<>`]+/gi;

/** Credentials inside the URLs of `text`: passwords, `user:password@`, and secret query parameters. */
export function urlCredentials(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(URL_IN_TEXT)) {
    let url: URL;
    try {
      url = new URL(m[0]);
    } catch {
      continue;
    }
    if (url.password) {
      out.push(url.password, safeDecode(url.password));
      // The user:password part is redacted whole, however short the password.
      out.push(`${url.username}:${url.password}@`, `${safeDecode(url.username)}:${safeDecode(url.password)}@`);
    }
    for (const [name, value] of url.searchParams) {
      if (SECRET_PARAM.test(name) && value) out.push(value, encodeURIComponent(value));
    }
  }
  return out;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

const keep = (v: string) => v.length >= MIN_SECRET_LENGTH || /:.*@$/.test(v);

/** The secret values of an environment (and of the configured names and URLs), longest first. */
export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (isSecretName(name) && value.length >= MIN_SECRET_LENGTH) out.add(value);
    if (value.includes('://')) for (const c of urlCredentials(value)) if (keep(c)) out.add(c);
  }
  for (const u of configured.urls) for (const c of urlCredentials(u)) if (keep(c)) out.add(c);
  // Longest first, so a secret containing another is replaced whole.
  return [...out].sort((a, b) => b.length - a.length);
}

export interface Redactor {
  (text: string): string;
  /** Length of the longest text replaced (0: nothing is secret); a stream holds back this much. */
  readonly longest?: number;
  /** Where secret forms occur in `text`, as [start, end) ranges, in order. */
  spans?(text: string): Array<[number, number]>;
}

const reverse = (s: string) => [...s].reverse().join('');
const jsonOnce = (s: string) => JSON.stringify(s).slice(1, -1);
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** The part of base64(prefix + s) that depends only on s, for prefixes of 0, 1 and 2 bytes. */
function base64Cores(s: string): string[] {
  const bytes = Buffer.from(s, 'utf8');
  const out: string[] = [];
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const core = b64.slice(Math.ceil((k * 8) / 6), Math.floor(((k + bytes.length) * 8) / 6));
    if (core.length >= MIN_SECRET_LENGTH) out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

/** Every form of `s` that is replaced: matched ignoring case (text) or exactly (base64). */
export function secretForms(s: string): { text: string[]; exact: string[] } {
  const text = new Set<string>();
  const exact = new Set<string>();
  const variants = [s, reverse(s)];
  for (const v of variants) {
    const once = jsonOnce(v);
    text.add(v).add(once).add(jsonOnce(once));
  }
  if (s.length >= MIN_SECRET_LENGTH) {
    for (const v of variants) {
      const url = encodeURIComponent(v);
      text.add(url).add(url.replace(/%20/g, '+'));
    }
    // Encodings of the changed-case forms differ from those of the secret itself.
    const cased = new Set([s, s.toUpperCase(), s.toLowerCase()].flatMap((v) => [v, reverse(v)]));
    for (const v of cased) {
      text.add(Buffer.from(v, 'utf8').toString('hex'));
      for (const c of base64Cores(v)) exact.add(c);
    }
  }
  return { text: [...text].filter(Boolean), exact: [...exact] };
}

function alternation(forms: string[], flags: string): RegExp | undefined {
  if (forms.length === 0) return undefined;
  const sorted = [...new Set(forms)].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(escapeRe).join('|'), flags);
}

/** Replaces each secret in each of its forms by [REDACTED]. */
export function makeRedactor(secrets: string[] = secretValues()): Redactor {
  const textForms: string[] = [];
  const exactForms: string[] = [];
  for (const s of secrets) {
    if (!s) continue;
    const f = secretForms(s);
    textForms.push(...f.text);
    exactForms.push(...f.exact);
  }
  const textRe = alternation(textForms, 'gi');
  const exactRe = alternation(exactForms, 'g');
  const longest = Math.max(0, ...textForms.map((f) => f.length), ...exactForms.map((f) => f.length));
  if (!textRe && !exactRe) return Object.assign((t: string) => t, { longest: 0, spans: () => [] as Array<[number, number]> });
  // Most text holds no secret: one test of each pattern decides that before anything is replaced
  // (a single scan of the text; a lower-cased copy searched once per form took four times as long).
  const textTest = textRe && new RegExp(textRe.source, 'i');
  const exactTest = exactRe && new RegExp(exactRe.source);
  const mayHold = (t: string) => (exactTest !== undefined && exactTest.test(t)) || (textTest !== undefined && textTest.test(t));
  const redact = (text: string): string => {
    if (!mayHold(text)) return text;
    let out = text;
    if (textRe) out = out.replace(textRe, REDACTED);
    if (exactRe) out = out.replace(exactRe, REDACTED);
    return out;
  };
  const spans = (text: string): Array<[number, number]> => {
    if (!mayHold(text)) return [];
    const found: Array<[number, number]> = [];
    for (const re of [textRe, exactRe]) {
      if (!re) continue;
      for (const m of text.matchAll(re)) found.push([m.index, m.index + m[0].length]);
    }
    return found.sort((a, b) => a[0] - b[0]);
  };
  return Object.assign(redact, { longest, spans });
}

/** A copy of `value` with every string in it (object keys too) redacted: what is written to a store as JSON. */
export function redactDeep<T>(value: T, redact: (text: string) => string): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redact(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v))
        Object.defineProperty(out, redact(k), { value: walk(x), enumerable: true, writable: true, configurable: true });
      return out;
    }
    return v;
  };
  return walk(value) as T;
}

/** The error with its message and stack redacted in place (a queue stores both: BullMQ's failedReason and stacktrace). */
export function redactError<E>(e: E, redact: (text: string) => string): E {
  if (e instanceof Error) {
    e.message = redact(e.message);
    if (e.stack) e.stack = redact(e.stack);
  }
  return e;
}

/**
 * A queue job's processor whose result and error are redacted before the queue stores them in
 * Redis (a returned value, a failed reason, a stack trace): nothing a worker writes there holds a
 * secret of this process.
 */
export function redactedProcessor<A extends unknown[], R>(
  fn: (...args: A) => Promise<R>,
  redact: (text: string) => string,
): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return redactDeep(await fn(...args), redact);
    } catch (e) {
      throw redactError(e, redact);
    }
  };
}
