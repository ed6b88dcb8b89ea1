// Secrets never reach a file or stdout: values of environment variables named like keys,
// tokens and secrets are replaced wherever they appear.

const SECRET_NAME = /(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD)$/i;
const MIN_SECRET_LENGTH = 6;

export function secretValues(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name)) out.add(value);
  }
  // Longest first, so a secret containing another is replaced whole.
  return [...out].sort((a, b) => b.length - a.length);
}

export type Redactor = (text: string) => string;

/**
 * Replaces each secret, and its JSON-escaped forms (a secret with a quote or a backslash is
 * written escaped in journal lines, and twice escaped inside a JSON string in JSON).
 */
export function makeRedactor(secrets: string[] = secretValues()): Redactor {
  const forms = new Set<string>();
  for (const s of secrets) {
    const once = JSON.stringify(s).slice(1, -1);
    forms.add(s).add(once).add(JSON.stringify(once).slice(1, -1));
  }
  const ordered = [...forms].filter((f) => f.length > 0).sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (t) => t;
  return (text) => {
    let out = text;
    for (const s of ordered) if (out.includes(s)) out = out.split(s).join('[REDACTED]');
    return out;
  };
}
