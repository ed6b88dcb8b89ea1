import { createServer } from 'node:http';
import { createReadStream, statSync } from 'node:fs';
import { resolveModelFile } from 'node-llama-cpp';
const file = '.cache/models/SmolLM2-135M-Instruct.Q4_1.gguf';
const size = statSync(file).size;
const srv = createServer((req, res) => {
  console.log(req.method, req.url, req.headers.range);
  if (!req.url.startsWith('/me/tiny-GGUF/resolve/main/tiny.gguf')) { res.writeHead(404); return res.end('no'); }
  const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
  if (range) { const a = +range[1], b = range[2] ? +range[2] : size - 1; res.writeHead(206, { 'content-length': b - a + 1, 'content-range': `bytes ${a}-${b}/${size}`, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' }); if (req.method === 'HEAD') return res.end(); return createReadStream(file, { start: a, end: b }).pipe(res); }
  res.writeHead(200, { 'content-length': size, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' });
  if (req.method === 'HEAD') return res.end();
  createReadStream(file).pipe(res);
}).listen(0, '127.0.0.1', async () => {
  const ep = `http://127.0.0.1:${srv.address().port}/`;
  const t = performance.now();
  const ac = new AbortController(); setTimeout(() => ac.abort(), 30000);
  try { console.log(await resolveModelFile('hf:me/tiny-GGUF/tiny.gguf', { directory: '/tmp/hfx', cli: false, signal: ac.signal, endpoints: { huggingFace: ep } })); } catch (e) { console.log('ERR', e.message.slice(0, 300)); }
  console.log('ok', performance.now() - t);
  try { console.log(await resolveModelFile('hf:me/missing-GGUF/x.gguf', { directory: '/tmp/hfx', cli: false, signal: ac.signal, endpoints: { huggingFace: ep } })); } catch (e) { console.log('ERR404', performance.now() - t, e.message.slice(0, 300)); }
  srv.close();
});
