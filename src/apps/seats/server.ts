// The seats' web server (docs/seats.md): a Hono app on @hono/node-server, on 127.0.0.1 unless
// --host says otherwise. Each seat's page and JSON API live under its capability token
// (/seat/TOKEN, /seat/TOKEN/state, /seat/TOKEN/answer, /seat/TOKEN/join); the runner page under
// its own (/?t=TOKEN). What a request may do is decided by the desk (src/features/seats/desk.ts).
import type { AddressInfo } from 'node:net';
import { Hono, type Context } from 'hono';
import { serve } from '@hono/node-server';
import type { ApiReply, SeatDesk } from '../../features/seats/desk.js';
import { runnerPage, SEAT_JS, seatPage } from './pages.js';

export interface SeatServerOptions {
  desk: SeatDesk;
  /** The run's name, shown on the pages. */
  title: string;
  host?: string;
  port?: number;
}

export interface SeatServer {
  /** http://HOST:PORT */
  base: string;
  /** Each seat's link. */
  links: Array<{ seat: string; url: string }>;
  /** The runner page's link. */
  runnerUrl: string;
  close(): Promise<void>;
}

/** The largest request body taken (an answer), in bytes. */
const MAX_BODY = 64 * 1024;

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'none'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

function json(c: Context, r: ApiReply) {
  return c.json(r.body, r.status as 200);
}

async function bodyOf(c: Context): Promise<unknown> {
  const length = Number(c.req.header('content-length') ?? '0');
  if (length > MAX_BODY) return Symbol.for('too-large');
  const text = await c.req.text();
  if (text.length > MAX_BODY) return Symbol.for('too-large');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return Symbol.for('not-json');
  }
}

export function seatApp(desk: SeatDesk, title: string): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    await next();
    c.header('Referrer-Policy', 'no-referrer');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Cache-Control', 'no-store');
    c.header('Content-Security-Policy', CSP);
    c.header('X-Frame-Options', 'DENY');
  });
  app.get('/', (c) => {
    if (!desk.isRunner(c.req.query('t'))) return c.text('forbidden: the runner page needs the token of its URL\n', 403);
    return c.html(runnerPage(title, desk.overview()));
  });
  app.get('/runner.json', (c) => {
    if (!desk.isRunner(c.req.query('t'))) return c.json({ error: 'forbidden' }, 403);
    return c.json({ seats: desk.overview() });
  });
  app.get('/static/seat.js', (c) => {
    c.header('Content-Type', 'text/javascript; charset=utf-8');
    return c.body(SEAT_JS);
  });
  app.get('/seat/:token', (c) => {
    const r = desk.state(c.req.param('token'));
    if (r.status !== 200) return c.text('forbidden: no seat has this token\n', 403);
    return c.html(seatPage(title));
  });
  app.get('/seat/:token/state', (c) => json(c, desk.state(c.req.param('token'))));
  const post = (fn: (token: string, body: unknown) => ApiReply) => async (c: Context) => {
    const body = await bodyOf(c);
    if (body === Symbol.for('too-large')) return c.json({ error: `the request is larger than ${MAX_BODY} bytes` }, 413);
    if (body === Symbol.for('not-json')) return c.json({ error: 'the request must be JSON' }, 400);
    return json(c, fn(c.req.param('token')!, body));
  };
  app.post(
    '/seat/:token/answer',
    post((t, b) => desk.answer(t, b)),
  );
  app.post(
    '/seat/:token/join',
    post((t, b) => desk.join(t, (b as { name?: unknown } | null)?.name)),
  );
  app.notFound((c) => c.text('not found\n', 404));
  return app;
}

export function startSeatServer(o: SeatServerOptions): Promise<SeatServer> {
  const host = o.host ?? '127.0.0.1';
  const app = seatApp(o.desk, o.title);
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: o.port ?? 0, hostname: host }, (info: AddressInfo) => {
      const h = host.includes(':') ? `[${host}]` : host;
      const base = `http://${h}:${info.port}`;
      resolve({
        base,
        links: o.desk.seats().map((s) => ({ seat: s.seat, url: `${base}/seat/${s.token}` })),
        runnerUrl: `${base}/?t=${o.desk.runnerToken}`,
        // requests under way are answered (the one that told a seat the run is over), idle connections
        // closed now, any left a second later
        close: () =>
          new Promise<void>((done) => {
            const s = server as unknown as {
              closeAllConnections?: () => void;
              closeIdleConnections?: () => void;
              close: (cb: () => void) => void;
            };
            s.close(() => done());
            s.closeIdleConnections?.();
            setTimeout(() => s.closeAllConnections?.(), 1000).unref();
          }),
      });
    });
    server.once('error', reject);
  });
}
