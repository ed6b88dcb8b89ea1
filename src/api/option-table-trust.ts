// Entries of the option table (./option-table.ts) for what a run may reach: the sandbox of code and
// MCP servers, the allow-lists of MCP servers and LLM base URLs, and the address a server binds.
import { both, type OptionSpec, unionList } from './option-spec.js';

export const TRUST_OPTIONS = {
  sandbox: {
    api: 'sandbox',
    flag: 'sandbox',
    type: 'boolean',
    default: 'when bubblewrap works here',
    resume: { key: 'sandbox' },
    on: {
      run: 'Code runs under bubblewrap (no network, read-only filesystem except the workspace) when it works here; --sandbox requires it, --no-sandbox turns it off (with a warning); with --sandbox, stdio MCP servers run under it too',
    },
    doc: 'code runs under bubblewrap when it works here; `true` requires it, `false` turns it off',
  },
  sandboxNetwork: {
    api: 'sandboxNetwork',
    flag: 'sandbox-network',
    type: 'boolean',
    default: 'false',
    resume: { key: 'sandbox_network' },
    on: {
      run: 'Give code network inside the sandbox (pip install, downloads), with a warning; files stay read-only except the workspace, where installs go',
    },
    doc: "code gets network inside the sandbox, with a warning (a code command's `network: true` asks the same)",
  },
  allowMcp: unionList(
    'allowMcp',
    'allow-mcp',
    ',',
    {
      run: 'Let the MCP server NAME of the SOP start without asking (repeatable; docs/tools.md)',
      ...both('Let the MCP server NAME start without asking, besides those allowed when the run started (repeatable)'),
    },
    "MCP servers of the SOP allowed to start (NAME), besides the user's allow file ([tools.md](tools.md))",
  ),
  allowMcpEnv: unionList(
    'allowMcpEnv',
    'allow-mcp-env',
    ',',
    {
      run: 'Let MCP server NAME read the environment variable VAR through ${VAR} in its declaration: NAME=VAR (repeatable; allows NAME too)',
      ...both('Let MCP server NAME read the environment variable VAR: NAME=VAR (repeatable; allows NAME too)'),
    },
    'the variables each MCP server may read (NAME=VAR; allows NAME too)',
  ),
  allowBaseUrl: unionList(
    'allowBaseUrl',
    'allow-base-url',
    ' ',
    {
      run: 'Let the SOP send its LLM calls, with your OPENAI_API_KEY, to this server it names (llm.base_url): URL (repeatable; docs/tools.md)',
      ...both(
        'Let the SOP send its LLM calls, with OPENAI_API_KEY, to this server it names, besides those allowed when the run started: URL (repeatable)',
      ),
      sweep:
        "Let the SOP send its LLM calls, with OPENAI_API_KEY, to this server it names: URL (repeatable; on a queue, the workers' flag decides)",
    },
    'LLM servers the SOP names (llm.base_url) that its calls may go to with OPENAI_API_KEY, besides the allow file ([tools.md](tools.md))',
  ),
  allowBaseUrlEnv: unionList(
    'allowBaseUrlEnv',
    'allow-base-url-env',
    ' ',
    {
      run: 'Let the SOP send its LLM calls, with the key in VAR, to this server it names: URL=VAR (repeatable)',
      ...both('The same, with the key in VAR: URL=VAR (repeatable)'),
      sweep: 'The same, with the key in VAR: URL=VAR (repeatable)',
    },
    'the same, with the key in VAR: `URL=VAR`',
  ),
  bind: {
    api: 'bind',
    flag: 'bind',
    type: 'array',
    resume: { key: 'bind', sep: ',' },
    on: {
      run: 'Bind a tool slot to an MCP tool: SLOT=server/tool, e.g. web_search=search/web_search (repeatable; wins over the SOP)',
    },
    doc: "tool slots bound to MCP tools (`{ web_search: 'search/web_search' }`)",
  },
} as const satisfies Record<string, OptionSpec>;
