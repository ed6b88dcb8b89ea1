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

export function makeRedactor(secrets: string[] = secretValues()): Redactor {
  if (secrets.length === 0) return (t) => t;
  return (text) => {
    let out = text;
    for (const s of secrets) if (out.includes(s)) out = out.split(s).join('[REDACTED]');
    return out;
  };
}
