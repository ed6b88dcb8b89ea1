// Code that fails because the sandbox has no network (the default) says so: pip's "No matching
// distribution found", a name that does not resolve, a refused connection. Without this the agent
// goes looking for another package and the user never learns that a flag would have done it.

/** What failing code prints when it had no network, and how to say each to a person. */
const SIGNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/No matching distribution found/i, 'pip found no package index'],
  [/Could not find a version that satisfies the requirement/i, 'pip found no package index'],
  [/Failed to establish a new connection|NewConnectionError/, 'a connection could not be made'],
  [
    /Temporary failure in name resolution|Name or service not known|\bEAI_AGAIN\b|\bENOTFOUND\b|Could not resolve host/i,
    'a host name did not resolve',
  ],
  [/Connection refused|\bECONNREFUSED\b/i, 'a connection was refused'],
  [/Network is unreachable|\bENETUNREACH\b/i, 'the network is unreachable'],
];

/**
 * The line to add to a failed code run's result when the missing network explains the failure:
 * only for code that ran in the sandbox without network. undefined otherwise.
 */
export function networkHint(o: { ok: boolean; sandboxed: boolean; network: boolean; text: string }): string | undefined {
  if (o.ok || !o.sandboxed || o.network) return undefined;
  const sign = SIGNS.find(([re]) => re.test(o.text));
  if (!sign) return undefined;
  // first the flag: a terminal shows the first 100 characters of a result
  return `The sandbox has no network (--sandbox-network gives it), which explains this failure: ${sign[1]}. Code can download or pip install only when the run is started with --sandbox-network (or the code command has "network": true).`;
}
