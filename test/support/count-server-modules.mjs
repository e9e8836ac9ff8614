// Preloaded into a console process (node --import) by test/integration/one-copy.test.ts: counts the
// loads of each module of lib/server through Node's module loader (a load hook: once per URL), by
// its path without the extension, so that the sources and the bundle's .mjs name one module. A
// module loaded twice (another URL, a query) is a second copy. The counts are printed on exit.
import { register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const counts = new Map();
const { port1, port2 } = new MessageChannel();
port1.on('message', (url) => {
  const path = /\/(lib\/server\/.+?)\.(?:ts|mjs|js)(?:\?.*)?$/.exec(url)?.[1] ?? url;
  counts.set(path, (counts.get(path) ?? 0) + 1);
});
port1.unref();
register('./server-module-hook.mjs', import.meta.url, { data: { port: port2 }, transferList: [port2] });
process.on('exit', () => process.stderr.write(`\nSERVER-MODULES ${JSON.stringify(Object.fromEntries(counts))}\n`));
