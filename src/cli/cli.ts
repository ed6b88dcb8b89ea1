// The `sop` command line. Each command's module is imported only when it runs, so
// `sop --help` and `sop validate` start fast.
import yargs, { type Argv } from 'yargs';

const collect = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);

export function buildCli(argv: string[]): Argv {
  return yargs(argv)
    .scriptName('sop')
    .usage('$0 <command> [options]\n\nRun multi-agent simulations described as JSON SOP files.')
    .command(
      'run <file>',
      'Run a SOP (or an Agents 1.0 config) and write a run folder',
      (y) => y
        .positional('file', { type: 'string', demandOption: true, describe: 'SOP file (.sop.json)' })
        .option('llm', { type: 'string', describe: 'openai | mock | replay:CASSETTE (default: the SOP\'s llm.provider, else openai)' })
        .option('model', { type: 'string', describe: 'Use this model for every call' })
        .option('base-url', { type: 'string', describe: 'OpenAI-compatible server URL (or OPENAI_BASE_URL)' })
        .option('max-turns', { type: 'number', describe: 'Stop after this many turns (default 200)' })
        .option('seed', { type: 'number', describe: 'Seed for random speaker choice (default 1)' })
        .option('record', { type: 'string', describe: 'Record every LLM call to this cassette file' })
        .option('out', { type: 'string', default: 'runs', describe: 'Folder where run folders are created' })
        .option('input', { type: 'string', array: true, describe: 'An input of the SOP, as name=value (repeatable)' })
        .option('goal', { type: 'string', describe: 'Shorthand for --input goal=TEXT' })
        .option('answers', { type: 'string', describe: 'Human answers, one per line or a JSON list (for unattended runs)' })
        .option('json', { type: 'boolean', default: false, describe: 'Print run events as JSON lines on stdout' })
        .option('quiet', { type: 'boolean', default: false, describe: 'Print only the closing line' })
        .option('timeout', { type: 'number', describe: 'Timeout of one LLM request in seconds (default 120)' }),
      async (a) => {
        const { runCommand } = await import('./run-command.js');
        process.exitCode = await runCommand({
          file: a.file, llm: a.llm, model: a.model, baseUrl: a['base-url'], maxTurns: a['max-turns'], seed: a.seed,
          record: a.record, out: a.out, inputs: collect(a.input), goal: a.goal, answers: a.answers,
          json: a.json, quiet: a.quiet, timeoutMs: a.timeout !== undefined ? a.timeout * 1000 : undefined,
        });
      },
    )
    .command(
      'validate <files..>',
      'Check SOP files against the schema and the graph rules',
      (y) => y.positional('files', { type: 'string', array: true, demandOption: true, describe: 'SOP files' })
        .option('quiet', { type: 'boolean', default: false, describe: 'Print errors only' }),
      async (a) => {
        const { validateCommand } = await import('./validate-command.js');
        process.exitCode = validateCommand(collect(a.files), { quiet: a.quiet });
      },
    )
    .command(
      'graph <file>',
      'Print the state graph as a Mermaid diagram',
      (y) => y.positional('file', { type: 'string', demandOption: true, describe: 'SOP file' }),
      async (a) => {
        const { graphCommand } = await import('./graph-command.js');
        process.exitCode = graphCommand(a.file);
      },
    )
    .demandCommand(1, 'Name a command: run, validate or graph (sop --help lists them).')
    .strict()
    .recommendCommands()
    .example('$0 run examples/debate/debate.sop.json --llm replay:examples/debate/debate.cassette.json', 'Replay the debate offline')
    .example('$0 run sops/assistant.sop.json --llm mock --max-turns 20', 'Dry-run a SOP with placeholder replies')
    .example('$0 validate sops/*.json', 'Check SOP files')
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((msg, err, y) => {
      if (err) throw err;
      process.stderr.write(`${msg}\n\nRun "sop --help" for usage.\n`);
      process.exit(2);
    });
}

