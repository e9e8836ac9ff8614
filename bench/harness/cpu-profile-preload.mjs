// Loaded into the console's processes by `npm run bench:profile` (NODE_OPTIONS=--import …, as
// Node 20 refuses --cpu-prof there): in the console's HTTP server and the lock-service process only, SIGUSR2 starts V8's CPU
// profiler and the next SIGUSR2 stops it and writes the profile to BENCH_CPU_PROFILE_DIR, so the
// profile covers the measured window exactly (not the start, not the warm-up).
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

const dir = process.env.BENCH_CPU_PROFILE_DIR;
if (dir && process.argv.some((a) => a.includes('console-server') || a.includes('lock-service-server'))) {
  const session = new Session();
  session.connect();
  let running = false;
  process.on('SIGUSR2', () => {
    if (!running) {
      running = true;
      session.post('Profiler.enable', () =>
        session.post('Profiler.setSamplingInterval', { interval: 500 }, () => session.post('Profiler.start')),
      );
      return;
    }
    running = false;
    session.post('Profiler.stop', (err, result) => {
      const file = join(dir, `server-${process.pid}-${Date.now()}.cpuprofile`);
      writeFileSync(file, err ? JSON.stringify({ error: String(err) }) : JSON.stringify(result.profile));
    });
  });
}
