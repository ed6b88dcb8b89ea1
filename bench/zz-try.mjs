import { loadEngine } from './lib/engine.mjs';
import { billedCaches } from './lib/cache-fixtures.mjs';
const t = Date.now();
const r = await billedCaches(await loadEngine());
const brief = (x) => JSON.stringify(x, (k, v) => (k === 'by_step' || k === 'by_purpose' ? JSON.stringify(v) : v));
console.log(brief(r), (Date.now() - t) / 1000, 's');
