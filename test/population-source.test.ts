// Population sources: CSV and JSONL rows streamed with typed cells, the same rows from either
// format, and one line naming file:line for each kind of bad input.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cellValue, readColumns, streamSource, type SourceRow } from '../src/features/population/source.js';

const FIX = join(process.cwd(), 'test/fixtures/population');
const dir = mkdtempSync(join(tmpdir(), 'pop-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function all(file: string, id = 'id'): Promise<SourceRow[]> {
  const out: SourceRow[] = [];
  for await (const r of streamSource(file, id, { display: file.split('/').pop() })) out.push(r);
  return out;
}

async function failure(file: string, id = 'id'): Promise<string> {
  try {
    await all(file, id);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('no error');
}

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('population sources', () => {
  it('reads CSV with typed cells: numbers as written, leading zeros kept as text, true/false', async () => {
    const rows = await all(join(FIX, 'people.csv'));
    expect(rows.map((r) => r.id)).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(rows[0]!.row).toEqual({ id: 'p1', name: 'Ana', age: 34, party: 'left', zip: '01234', member: true });
    expect(rows[1]!.row.name).toBe('Ben, Jr');
    expect(rows[2]!.row.zip).toBe(1.5);
    expect(rows.map((r) => r.line)).toEqual([2, 3, 4, 5]);
    expect([cellValue('+1'), cellValue(' 1'), cellValue('0x10'), cellValue('1e3'), cellValue('-0.5'), cellValue('True')]).toEqual([
      '+1',
      ' 1',
      '0x10',
      1000,
      -0.5,
      'True',
    ]);
  });

  it('gives the same rows from JSONL as from the same data in CSV', async () => {
    const csv = await all(join(FIX, 'people.csv'));
    const jsonl = await all(join(FIX, 'people.jsonl'));
    expect(jsonl.map((r) => [r.id, r.row])).toEqual(csv.map((r) => [r.id, r.row]));
    expect(jsonl.map((r) => r.line)).toEqual([1, 2, 4, 5]); // the blank line is skipped, not renumbered
    expect(readColumns(join(FIX, 'people.jsonl'))).toEqual(readColumns(join(FIX, 'people.csv')));
  });

  it('reads only the header for the columns', () => {
    // A header, then a row that would not parse: readColumns never gets there.
    const file = write('header.csv', 'id,"multi\nline",x\n1,"broken\n');
    expect(readColumns(file)).toEqual(['id', 'multi\nline', 'x']);
  });

  it('reads a CSV with a byte order mark and CRLF line ends like any other', async () => {
    const file = write('crlf.csv', '\uFEFFid,name\r\n1,"A\r\nB"\r\n2,C\r\n');
    expect(readColumns(file)).toEqual(['id', 'name']);
    expect((await all(file)).map((r) => r.row)).toEqual([
      { id: 1, name: 'A\r\nB' },
      { id: 2, name: 'C' },
    ]);
    const jsonl = write('crlf.jsonl', '\uFEFF{"id":1}\r\n{"id":2}\r\n');
    expect(readColumns(jsonl)).toEqual(['id']);
  });

  it('refuses a file over the size cap before reading it', async () => {
    const file = join(FIX, 'people.csv');
    const message = await (async () => {
      try {
        for await (const _ of streamSource(file, 'id', { maxBytes: 64, display: 'people.csv' })) void _;
      } catch (err) {
        return (err as Error).message;
      }
    })();
    expect(message).toMatch(/^people\.csv: is \d+ bytes, over the limit of 64 bytes/);
  });

  it('refuses a malformed CSV row with file:line', async () => {
    expect(await failure(write('short.csv', 'id,name\n1,a\n2\n'))).toBe('short.csv:3: has 1 field, the header has 2');
    expect(await failure(write('quote.csv', 'id,name\n1,"a"b\n'))).toMatch(
      /^quote\.csv:2: a quote closes a field before its end, field 2$/,
    );
  });

  it('refuses a malformed JSONL line with file:line', async () => {
    expect(await failure(write('bad.jsonl', '{"id":1}\n{"id":2\n'))).toMatch(/^bad\.jsonl:2: not valid JSON \(/);
    // the column and what was wrong, never the row's bytes (V8 quotes them: "root:x:0:0"...)
    const quoted = await failure(write('passwd.jsonl', '{"id":1}\nroot:x:0:0:CANARY:/root:/bin/bash\n'));
    expect(quoted).toBe('passwd.jsonl:2: not valid JSON (column 1: Unexpected character)');
    expect(await failure(write('list.jsonl', '{"id":1,"t":"a"}\n{"id":2,"t":[1]}\n'))).toBe(
      'list.jsonl:2: "t" holds a list; a value is a string, a number or true/false',
    );
    expect(await failure(write('keys.jsonl', '{"id":1,"a":1}\n{"id":2,"b":1}\n'))).toBe(
      'keys.jsonl:2: no "a": every line has the columns of the first (columns: id, a)',
    );
  });

  it('refuses a missing file, a missing id column, an empty id and duplicate ids', async () => {
    expect(await failure(join(dir, 'nope.csv'))).toBe('nope.csv: file not found');
    expect(await failure(join(FIX, 'people.csv'), 'pid')).toBe(
      'people.csv:1: no id column "pid" (columns: id, name, age, party, zip, member)',
    );
    expect(await failure(write('dup.csv', 'id,x\na,1\nb,2\na,3\n'))).toBe('dup.csv:4: duplicate id "a" (first on line 2)');
    expect(await failure(write('dup.jsonl', '{"id":7}\n{"id":"7"}\n'))).toBe('dup.jsonl:2: duplicate id "7" (first on line 1)');
    expect(await failure(write('empty-id.csv', 'id,x\n,1\n'))).toBe('empty-id.csv:2: the id ("id") is empty');
    expect(await failure(write('empty.csv', ''))).toBe('empty.csv: is empty: a header row is needed');
    expect(await failure(write('twice.csv', 'id,a,a\n1,2,3\n'))).toBe('twice.csv:1: column "a" appears twice in the header');
  });

  it('refuses a line over the row cap, in either format', async () => {
    const long = 'x'.repeat(2 * 1024 * 1024);
    expect(await failure(write('long.csv', `id,bio\n1,${long}\n`))).toMatch(/^long\.csv:2: the row is longer than 1 MiB$/);
    expect(await failure(write('long.jsonl', `{"id":1}\n{"id":"${long}"}\n`))).toBe('long.jsonl:2: the line is longer than 1 MiB');
    expect(() => readColumns(write('longhead.csv', `${long},id\n`))).toThrow('longhead.csv:1: the first row is longer than 1 MiB');
  });

  it('refuses a named pipe without blocking, and a directory', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    expect(await failure(fifo)).toBe('pipe.csv: is a named pipe (FIFO), not a regular file');
    expect(() => readColumns(fifo)).toThrow('is a named pipe (FIFO), not a regular file');
    const folder = join(dir, 'folder.csv');
    execFileSync('mkdir', [folder]);
    expect(await failure(folder)).toBe('folder.csv: is a directory, not a population file');
    expect(() => readColumns('/dev/zero', { format: 'csv' })).toThrow('/dev/zero: is a character device, not a regular file');
    expect(() => readColumns(write('people.txt', 'id\n1\n'))).toThrow(
      'cannot tell the format from ".txt": name it .csv or .jsonl, or give "format"',
    );
  });
});
