// Child process of bench/startup.mjs: imports the packages named in argv, in order, and prints
// the milliseconds each import took (its own module graph, minus what earlier imports loaded).
const out = {};
for (const spec of process.argv.slice(2)) {
  const started = performance.now();
  await import(spec);
  out[spec] = performance.now() - started;
}
process.stdout.write(JSON.stringify(out) + '\n');
