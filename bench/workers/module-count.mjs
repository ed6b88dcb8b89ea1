// Child process of bench/startup.mjs: imports the package named in argv[2] and prints how many
// modules (files: ES modules through the loader's hook, CommonJS through require's cache) it
// loaded, and how many of them come from each package. A count does not depend on the machine's load.
import { register } from 'node:module';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';

const HOOKS = `
let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) {
  port.postMessage(url);
  return next(url, context);
}`;

const { port1, port2 } = new MessageChannel();
const seen = new Set();
const END = 'data:text/javascript,export default 0';
const ended = new Promise((resolve) => {
  port1.on('message', (url) => {
    if (url === END) resolve();
    else if (url.startsWith('file:')) seen.add(fileURLToPath(url));
  });
});
register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { port: port2 }, transferList: [port2] });
const before = new Set(Object.keys(createRequire(import.meta.url).cache));
await import(process.argv[2]);
await import(END);
await ended;
port1.close();
for (const file of Object.keys(createRequire(import.meta.url).cache)) if (!before.has(file)) seen.add(file);
const byPackage = {};
for (const file of seen) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file.slice(file.lastIndexOf('node_modules/')));
  const name = m ? m[1] : '(sop)';
  byPackage[name] = (byPackage[name] ?? 0) + 1;
}
process.stdout.write(JSON.stringify({ modules: seen.size, byPackage }) + '\n');
