// Child process of bench/startup.mjs: imports the packages named in argv, in order, and prints
// the milliseconds each import took (its own module graph, minus what earlier imports loaded):
// wall time (`ms`) and this process's CPU time, user and system (`cpu_ms`), which a machine busy
// with other work changes much less.
const ms = {};
const cpuMs = {};
for (const spec of process.argv.slice(2)) {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await import(spec);
  ms[spec] = performance.now() - started;
  const used = process.cpuUsage(cpu);
  cpuMs[spec] = (used.user + used.system) / 1000;
}
process.stdout.write(JSON.stringify({ ms, cpu_ms: cpuMs }) + '\n');
