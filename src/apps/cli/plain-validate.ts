// `sop validate FILE...` with no options is the command run most often (editors, hooks, CI): main.ts
// runs it without loading the argument parser, whose import and help layout take about a third of
// its start-up. Only argument lists the parser would read exactly this way qualify; any other
// (an option, `--`, an empty name, `help`, which the parser takes as --help) goes through cli.ts.

/** The files of `validate FILE...` when the arguments are only that, else undefined. */
export function plainValidateFiles(args: readonly string[]): string[] | undefined {
  if (args[0] !== 'validate' || args.length < 2) return undefined;
  const files = args.slice(1);
  return files.every((f) => f !== '' && !f.startsWith('-') && f !== 'help') ? files : undefined;
}
