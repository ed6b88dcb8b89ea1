#!/usr/bin/env node
// A small MCP server (official SDK): a notebook of notes kept in a JSON file.
//   node notes-server.mjs            speaks MCP on stdin/stdout (stdio)
//   node notes-server.mjs --http 0   serves Streamable HTTP on 127.0.0.1 (port 0: any free one);
//                                    prints "listening on http://127.0.0.1:PORT/mcp" when ready
// The notes live in the file given with --notes FILE, else $NOTES_FILE, else
// $SOP_WORKSPACE/notes.json (sop gives stdio servers the run's workspace), else ./notes.json.
// When $NOTES_CALL_LOG is set, every tool call is appended to it as one JSON line, with the
// server's own arguments (tests check the calls and arguments the server really received). Over HTTP,
// $NOTES_HTTP_TOKEN makes it refuse requests without "Authorization: Bearer TOKEN".
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const notesAt = process.argv.indexOf('--notes');
const file =
  (notesAt >= 0 ? process.argv[notesAt + 1] : undefined) ?? process.env.NOTES_FILE ?? join(process.env.SOP_WORKSPACE ?? '.', 'notes.json');
const load = () => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : []);
const save = (notes) => writeFileSync(file, JSON.stringify(notes, null, 2) + '\n');
const logCall = (tool, args) => {
  if (process.env.NOTES_CALL_LOG)
    appendFileSync(process.env.NOTES_CALL_LOG, JSON.stringify({ tool, args, pid: process.pid, argv: process.argv.slice(2) }) + '\n');
};
const text = (t) => ({ content: [{ type: 'text', text: t }] });
const show = (n) => `#${n.id} ${n.title}${n.tags?.length ? ` [${n.tags.join(', ')}]` : ''}: ${n.text}`;

function notesServer() {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'add_note',
    {
      description: 'Add a note to the notebook; returns its id.',
      inputSchema: {
        title: z.string().min(1).describe('A short title.'),
        text: z.string().describe('The note: one or two sentences and its source.'),
        tags: z.array(z.string()).optional().describe('Tags, e.g. ["sleep", "memory"].'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    async (args) => {
      logCall('add_note', args);
      const notes = load();
      const id = notes.reduce((m, n) => Math.max(m, n.id), 0) + 1;
      notes.push({ id, title: args.title, text: args.text, ...(args.tags ? { tags: args.tags } : {}) });
      save(notes);
      return text(`added note #${id} "${args.title}"`);
    },
  );
  server.registerTool(
    'list_notes',
    { description: 'List every note (id, title, tags, text).', inputSchema: {}, annotations: { readOnlyHint: true } },
    async (args) => {
      logCall('list_notes', args);
      const notes = load();
      return text(notes.length ? notes.map(show).join('\n') : 'the notebook is empty');
    },
  );
  server.registerTool(
    'search_notes',
    {
      description: 'Notes whose title, text or tags contain the query (case-insensitive).',
      inputSchema: { query: z.string().min(1).describe('Text to look for.') },
      annotations: { readOnlyHint: true },
    },
    async (args) => {
      logCall('search_notes', args);
      const q = args.query.toLowerCase();
      const hits = load().filter((n) => [n.title, n.text, ...(n.tags ?? [])].some((s) => s.toLowerCase().includes(q)));
      return text(hits.length ? hits.map(show).join('\n') : `no note matches "${args.query}"`);
    },
  );
  server.registerTool(
    'delete_note',
    {
      description: 'Delete a note by id.',
      inputSchema: { id: z.number().int().describe('The id of the note (#N in lists).') },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    async (args) => {
      logCall('delete_note', args);
      const notes = load();
      const at = notes.findIndex((n) => n.id === args.id);
      if (at < 0) return { isError: true, content: [{ type: 'text', text: `there is no note #${args.id}` }] };
      const [gone] = notes.splice(at, 1);
      save(notes);
      return text(`deleted note #${gone.id} "${gone.title}"`);
    },
  );
  return server;
}

const httpAt = process.argv.indexOf('--http');
if (httpAt >= 0) {
  // Streamable HTTP, stateless: a server and transport per request.
  const http = createServer(async (req, res) => {
    if (!req.url?.startsWith('/mcp')) {
      res.writeHead(404).end();
      return;
    }
    // $NOTES_HTTP_TOKEN: requests must carry "Authorization: Bearer TOKEN"
    if (process.env.NOTES_HTTP_TOKEN && req.headers.authorization !== `Bearer ${process.env.NOTES_HTTP_TOKEN}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }));
      return;
    }
    const server = notesServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  http.listen(Number(process.argv[httpAt + 1] ?? 0), '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${http.address().port}/mcp`);
  });
} else {
  await notesServer().connect(new StdioServerTransport());
  process.stdin.on('end', () => process.exit(0)); // the client is gone (sop ended or was killed)
}
