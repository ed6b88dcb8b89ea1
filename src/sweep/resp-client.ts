// A small Redis client (RESP2 over one TCP socket) in the shape BullMQ drives (its IRedisClient):
// the Redis commands BullMQ uses, Lua scripts by EVALSHA (EVAL when the server lacks them),
// pipelines and MULTI, a blocking BZPOPMIN, and reconnection after the server goes away.
// Used when the `ioredis` driver BullMQ prefers is not installed (src/sweep/queue.ts).
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Readable } from 'node:stream';

export interface RespOptions {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  connectionName?: string;
  [k: string]: unknown;
}

type Arg = string | number | Buffer;
type Reply = string | number | null | Error | Reply[];

class ReplyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplyError';
  }
}

const CLOSED = 'Connection is closed.';

/** Parses RESP2 replies from a growing buffer. */
class Parser {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;

  push(chunk: Buffer): void {
    this.buf = this.pos < this.buf.length ? Buffer.concat([this.buf.subarray(this.pos), chunk]) : chunk;
    this.pos = 0;
  }

  /** The next whole reply, or undefined when more bytes are needed. */
  next(): { value: Reply } | undefined {
    const start = this.pos;
    const v = this.read();
    if (v === undefined) {
      this.pos = start;
      return undefined;
    }
    return v;
  }

  private line(): string | undefined {
    const end = this.buf.indexOf('\r\n', this.pos);
    if (end < 0) return undefined;
    const s = this.buf.toString('utf8', this.pos, end);
    this.pos = end + 2;
    return s;
  }

  private read(): { value: Reply } | undefined {
    if (this.pos >= this.buf.length) return undefined;
    const type = String.fromCharCode(this.buf[this.pos]!);
    this.pos++;
    const l = this.line();
    if (l === undefined) return undefined;
    switch (type) {
      case '+':
        return { value: l };
      case '-':
        return { value: new ReplyError(l) };
      case ':':
        return { value: Number(l) };
      case '$': {
        const n = Number(l);
        if (n < 0) return { value: null };
        if (this.buf.length < this.pos + n + 2) return undefined;
        const s = this.buf.toString('utf8', this.pos, this.pos + n);
        this.pos += n + 2;
        return { value: s };
      }
      case '*': {
        const n = Number(l);
        if (n < 0) return { value: null };
        const out: Reply[] = [];
        for (let i = 0; i < n; i++) {
          const item = this.read();
          if (item === undefined) return undefined;
          out.push(item.value);
        }
        return { value: out };
      }
      default:
        return { value: new ReplyError(`unexpected reply type ${JSON.stringify(type)} from the server`) };
    }
  }
}

function encode(args: readonly Arg[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.isBuffer(a) ? a : Buffer.from(String(a));
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

interface Pending {
  resolve: (v: Reply) => void;
  reject: (e: Error) => void;
}

interface Script {
  sha: string;
  lua: string;
  keys: number;
}

function scriptArgs(script: Script, args: unknown[]): Arg[] {
  const list = args.length === 1 && Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  return [
    script.keys,
    ...list.map((a): Arg => (Buffer.isBuffer(a) ? a : a === undefined || a === null ? '' : typeof a === 'number' ? a : String(a))),
  ];
}

function check(v: Reply): Reply {
  if (v instanceof Error) throw v;
  return v;
}

export class RespClient extends EventEmitter {
  readonly isCluster = false;
  private socket: Socket | undefined;
  private parser = new Parser();
  private pending: Pending[] = [];
  private scripts = new Map<string, Script>();
  private loaded = new Set<string>();
  private state: 'wait' | 'connecting' | 'ready' | 'reconnecting' | 'end' = 'wait';
  private connecting: Promise<void> | undefined;
  private retries = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  [name: string]: unknown;

  constructor(readonly options: RespOptions) {
    super();
    this.setMaxListeners(50);
    void this.connect().catch(() => {}); // eager, like ioredis; errors go to 'error'
  }

  get status(): string {
    return this.state;
  }
  set status(v: string) {
    if (v === 'end') this.disconnect();
  }

  connect(): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    if (this.connecting) return this.connecting;
    if (this.state === 'end') this.state = 'wait';
    this.state = 'connecting';
    this.connecting = new Promise<void>((resolve, reject) => {
      const socket = connect({ host: this.options.host, port: this.options.port });
      socket.setNoDelay(true);
      socket.setKeepAlive(true, 10_000);
      this.socket = socket;
      this.parser = new Parser();
      let ready = false;
      socket.on('data', (chunk: Buffer) => this.onData(chunk));
      socket.on('error', (err) => {
        if (!ready) reject(err);
        if (this.state !== 'end') this.emit('error', err);
      });
      socket.on('close', () => {
        this.connecting = undefined;
        this.failPending(new Error(CLOSED));
        this.loaded.clear();
        if (this.socket === socket) this.socket = undefined;
        this.emit('close');
        if (this.state === 'end') return;
        // gone without being asked to: reconnect with a growing pause (at most 2 s)
        this.state = 'reconnecting';
        this.emit('reconnecting');
        const pause = Math.min(2000, 100 * 2 ** this.retries++);
        this.retryTimer = setTimeout(() => {
          if (this.state === 'reconnecting') void this.connect().catch(() => {});
        }, pause);
      });
      socket.once('connect', () => {
        const hello: Array<Promise<Reply>> = [];
        if (this.options.password)
          hello.push(
            this.send(
              this.options.username ? ['AUTH', this.options.username, this.options.password] : ['AUTH', this.options.password],
              true,
            ),
          );
        if (this.options.db) hello.push(this.send(['SELECT', this.options.db], true));
        if (this.options.connectionName) hello.push(this.send(['CLIENT', 'SETNAME', this.options.connectionName], true));
        Promise.all(hello)
          .then((replies) => {
            for (const r of replies) check(r);
            ready = true;
            this.retries = 0;
            this.state = 'ready';
            this.connecting = undefined;
            resolve();
            this.emit('connect');
            this.emit('ready');
          })
          .catch((err: Error) => {
            reject(err);
            socket.destroy(err);
          });
      });
    });
    return this.connecting;
  }

  private onData(chunk: Buffer): void {
    this.parser.push(chunk);
    for (let r = this.parser.next(); r; r = this.parser.next()) this.pending.shift()?.resolve(r.value);
  }

  private failPending(err: Error): void {
    const list = this.pending;
    this.pending = [];
    for (const p of list) p.reject(err);
  }

  /** Send one command; resolves with its reply (an error reply resolves as an Error value). */
  private async send(args: readonly Arg[], during = false): Promise<Reply> {
    if (!during && this.state !== 'ready') {
      if (this.state === 'end') throw new Error(CLOSED);
      await this.connect();
    }
    const socket = this.socket;
    if (!socket) throw new Error(CLOSED);
    return new Promise<Reply>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      socket.write(encode(args));
    });
  }

  /** Several commands written at once; their replies in order. */
  private async sendMany(list: readonly (readonly Arg[])[]): Promise<Reply[]> {
    if (this.state !== 'ready') {
      if (this.state === 'end') throw new Error(CLOSED);
      await this.connect();
    }
    const socket = this.socket;
    if (!socket) throw new Error(CLOSED);
    const replies = list.map(
      () =>
        new Promise<Reply>((resolve, reject) => {
          this.pending.push({ resolve, reject });
        }),
    );
    socket.write(Buffer.concat(list.map(encode)));
    return Promise.all(replies);
  }

  async call(...args: Arg[]): Promise<Reply> {
    return check(await this.send(args));
  }

  disconnect(reconnect = false): void {
    clearTimeout(this.retryTimer);
    if (reconnect) {
      this.socket?.destroy(); // 'close' reconnects
      return;
    }
    const wasOpen = this.socket !== undefined;
    this.state = 'end';
    this.socket?.destroy();
    this.failPending(new Error(CLOSED));
    if (!wasOpen) this.emit('close');
    setImmediate(() => this.emit('end'));
  }

  async quit(): Promise<string> {
    if (this.state === 'ready') await this.send(['QUIT']).catch(() => null);
    this.disconnect();
    return 'OK';
  }

  duplicate(overrides?: Partial<RespOptions>): RespClient {
    const dup = new RespClient({ ...this.options, ...(overrides ?? {}) });
    for (const [name, s] of this.scripts) dup.defineCommand(name, { numberOfKeys: s.keys, lua: s.lua });
    return dup;
  }

  defineCommand(name: string, def: { numberOfKeys: number; lua: string }): void {
    this.scripts.set(name, { sha: createHash('sha1').update(def.lua).digest('hex'), lua: def.lua, keys: def.numberOfKeys });
    this[name] = (...args: unknown[]) => this.runCommand(name, args);
  }

  private script(name: string): Script {
    const s = this.scripts.get(name);
    if (!s) throw new Error(`unknown script command "${name}"`);
    return s;
  }

  async runCommand(name: string, args: unknown[]): Promise<unknown> {
    const s = this.script(name);
    const rest = scriptArgs(s, args);
    const r = await this.send(['EVALSHA', s.sha, ...rest]);
    if (r instanceof Error && r.message.startsWith('NOSCRIPT')) {
      const v = check(await this.send(['EVAL', s.lua, ...rest]));
      this.loaded.add(s.sha);
      return v;
    }
    this.loaded.add(s.sha);
    return check(r);
  }

  /** Load the scripts a batch uses that this connection has not run yet (EVALSHA in MULTI cannot fall back). */
  async ensureScripts(names: Iterable<string>): Promise<void> {
    const missing = [...new Set(names)].map((n) => this.script(n)).filter((s) => !this.loaded.has(s.sha));
    if (missing.length === 0) return;
    const replies = await this.sendMany(missing.map((s) => ['SCRIPT', 'LOAD', s.lua]));
    replies.forEach((r, i) => {
      check(r);
      this.loaded.add(missing[i]!.sha);
    });
  }

  scriptOf(name: string): Script {
    return this.script(name);
  }

  multi(): RespBatch {
    return new RespBatch(this, true, (list) => this.sendMany(list));
  }
  pipeline(): RespBatch {
    return new RespBatch(this, false, (list) => this.sendMany(list));
  }

  async hgetall(key: string): Promise<Record<string, string>> {
    return pairs((await this.call('HGETALL', key)) as string[]);
  }
  async hget(key: string, field: string): Promise<string | null> {
    return (await this.call('HGET', key, field)) as string | null;
  }
  async hmget(key: string, ...fields: string[]): Promise<(string | null)[]> {
    return (await this.call('HMGET', key, ...fields)) as (string | null)[];
  }
  async hset(key: string, data: Record<string, string | number> | string, ...rest: Arg[]): Promise<number> {
    const flat = typeof data === 'object' ? Object.entries(data).flat() : [data, ...rest];
    return (await this.call('HSET', key, ...flat)) as number;
  }
  async hdel(key: string, ...fields: string[]): Promise<number> {
    return (await this.call('HDEL', key, ...fields)) as number;
  }
  async hexists(key: string, field: string): Promise<number> {
    return (await this.call('HEXISTS', key, field)) as number;
  }
  async get(key: string): Promise<string | null> {
    return (await this.call('GET', key)) as string | null;
  }
  async set(key: string, value: string | number, o?: { PX?: number; EX?: number }): Promise<string | null> {
    const extra: Arg[] = o?.PX != null ? ['PX', o.PX] : o?.EX != null ? ['EX', o.EX] : [];
    return (await this.call('SET', key, value, ...extra)) as string | null;
  }
  async del(...keys: string[]): Promise<number> {
    return keys.length ? ((await this.call('DEL', ...keys)) as number) : 0;
  }
  async zrange(key: string, start: number, end: number, o?: { WITHSCORES?: boolean }): Promise<string[]> {
    return (await this.call('ZRANGE', key, start, end, ...(o?.WITHSCORES ? ['WITHSCORES'] : []))) as string[];
  }
  async zrevrange(key: string, start: number, end: number, o?: { WITHSCORES?: boolean }): Promise<string[]> {
    return (await this.call('ZREVRANGE', key, start, end, ...(o?.WITHSCORES ? ['WITHSCORES'] : []))) as string[];
  }
  async zcard(key: string): Promise<number> {
    return (await this.call('ZCARD', key)) as number;
  }
  async zscore(key: string, member: string): Promise<string | null> {
    return (await this.call('ZSCORE', key, member)) as string | null;
  }
  async lrange(key: string, start: number, end: number): Promise<string[]> {
    return (await this.call('LRANGE', key, start, end)) as string[];
  }
  async llen(key: string): Promise<number> {
    return (await this.call('LLEN', key)) as number;
  }
  async ltrim(key: string, start: number, end: number): Promise<string> {
    return (await this.call('LTRIM', key, start, end)) as string;
  }
  async lpos(key: string, value: string): Promise<number | null> {
    return (await this.call('LPOS', key, value)) as number | null;
  }
  async smembers(key: string): Promise<string[]> {
    return (await this.call('SMEMBERS', key)) as string[];
  }
  async xadd(key: string, id: string, fields: Record<string, string | number>, o?: { MAXLEN?: number; approximate?: boolean }) {
    const trim: Arg[] = o?.MAXLEN != null ? ['MAXLEN', ...(o.approximate === false ? [] : ['~']), o.MAXLEN] : [];
    return (await this.call('XADD', key, ...trim, id, ...Object.entries(fields).flat())) as string;
  }
  async xread(streams: { key: string; id: string }[], o?: { BLOCK?: number; COUNT?: number }): Promise<unknown> {
    const args: Arg[] = ['XREAD'];
    if (o?.COUNT != null) args.push('COUNT', o.COUNT);
    if (o?.BLOCK != null) args.push('BLOCK', o.BLOCK);
    args.push('STREAMS', ...streams.map((s) => s.key), ...streams.map((s) => s.id));
    try {
      return await this.call(...args);
    } catch (err) {
      if (this.state === 'end') return null;
      throw err;
    }
  }
  async xtrim(key: string, strategy: 'MAXLEN', threshold: number, o?: { approximate?: boolean }): Promise<number> {
    return (await this.call('XTRIM', key, strategy, ...(o?.approximate ? ['~'] : []), threshold)) as number;
  }
  async bzpopmin(key: string, timeout: number): Promise<[string, string, string] | null> {
    try {
      return (await this.call('BZPOPMIN', key, timeout)) as [string, string, string] | null;
    } catch (err) {
      if (this.state === 'end') return null; // closed while waiting (the worker is stopping)
      throw err;
    }
  }
  async info(): Promise<string> {
    return (await this.call('INFO')) as string;
  }
  async clientSetName(name: string): Promise<unknown> {
    this.options.connectionName = name;
    return this.call('CLIENT', 'SETNAME', name);
  }
  async clientList(): Promise<string> {
    return (await this.call('CLIENT', 'LIST')) as string;
  }
  async clientInfo(): Promise<string> {
    return (await this.call('CLIENT', 'INFO')) as string;
  }
  async client(...args: Arg[]): Promise<unknown> {
    return this.call('CLIENT', ...args);
  }
  async scan(cursor: string | number, o: { MATCH?: string; COUNT?: number }): Promise<[string, string[]]> {
    const args: Arg[] = ['SCAN', cursor];
    if (o.MATCH) args.push('MATCH', o.MATCH);
    if (o.COUNT) args.push('COUNT', o.COUNT);
    return (await this.call(...args)) as [string, string[]];
  }
  scanStream(o: { match: string; count?: number }): Readable {
    const scan = (cursor: string) => this.scan(cursor, { MATCH: o.match, COUNT: o.count });
    async function* keys() {
      let cursor = '0';
      do {
        const [next, found] = await scan(cursor);
        cursor = next;
        if (found.length) yield found;
      } while (cursor !== '0');
    }
    return Readable.from(keys(), { objectMode: true });
  }
}

function pairs(flat: string[] | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!flat) return out;
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/** A pipeline (commands written together) or a MULTI/EXEC transaction; exec gives [error, reply] pairs. */
export class RespBatch {
  private readonly cmds: Array<{ args: Arg[]; script?: string; map?: (r: Reply) => unknown }> = [];

  constructor(
    private readonly client: RespClient,
    private readonly atomic: boolean,
    private readonly sendMany: (list: readonly (readonly Arg[])[]) => Promise<Reply[]>,
  ) {}

  private add(args: Arg[], map?: (r: Reply) => unknown, script?: string): this {
    this.cmds.push({ args, map, script });
    return this;
  }
  hgetall(key: string): this {
    return this.add(['HGETALL', key], (r) => pairs(r as string[]));
  }
  hset(key: string, data: Record<string, string | number>): this {
    return this.add(['HSET', key, ...Object.entries(data).flat()]);
  }
  hscan(key: string, cursor: string | number, o?: { COUNT?: number }): this {
    return this.add(['HSCAN', key, cursor, ...(o?.COUNT ? ['COUNT', o.COUNT] : [])]);
  }
  smembers(key: string): this {
    return this.add(['SMEMBERS', key]);
  }
  sscan(key: string, cursor: string | number, o?: { COUNT?: number }): this {
    return this.add(['SSCAN', key, cursor, ...(o?.COUNT ? ['COUNT', o.COUNT] : [])]);
  }
  zrange(key: string, start: number, end: number): this {
    return this.add(['ZRANGE', key, start, end]);
  }
  lrange(key: string, start: number, end: number): this {
    return this.add(['LRANGE', key, start, end]);
  }
  llen(key: string): this {
    return this.add(['LLEN', key]);
  }
  del(...keys: string[]): this {
    return this.add(['DEL', ...keys]);
  }
  runCommand(name: string, args: unknown[]): this {
    const s = this.client.scriptOf(name);
    return this.add(['EVALSHA', s.sha, ...scriptArgs(s, args)], undefined, name);
  }

  async exec(): Promise<[Error | null, unknown][] | null> {
    if (this.cmds.length === 0) return [];
    await this.client.ensureScripts(this.cmds.flatMap((c) => (c.script ? [c.script] : [])));
    const list = this.cmds.map((c) => c.args);
    let replies: Reply[];
    if (this.atomic) {
      const all = await this.sendMany([['MULTI'], ...list, ['EXEC']]);
      const exec = all[all.length - 1]!;
      if (exec instanceof Error) throw exec;
      if (exec === null) return null;
      replies = exec as Reply[];
    } else {
      replies = await this.sendMany(list);
    }
    return replies.map((r, i) => (r instanceof Error ? [r, null] : [null, this.cmds[i]!.map ? this.cmds[i]!.map(r) : r]));
  }
}
