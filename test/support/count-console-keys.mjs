// Preloaded into a console process (node --import) by test/integration/one-copy.test.ts: counts the
// Symbol.for('redlock-console.*') keys the process makes. Each module of lib/server that keeps
// process state makes its key once, at its top level: a key made twice is a second copy of a module.
// The counts are printed on exit.
const counts = new Map();
const symbolFor = Symbol.for;
Symbol.for = function (key) {
  if (typeof key === 'string' && key.startsWith('redlock-console.')) counts.set(key, (counts.get(key) ?? 0) + 1);
  return symbolFor.call(Symbol, key);
};
process.on('exit', () => process.stderr.write(`\nCONSOLE-KEYS ${JSON.stringify(Object.fromEntries(counts))}\n`));
