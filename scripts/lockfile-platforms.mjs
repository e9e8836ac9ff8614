#!/usr/bin/env node
/**
 * The npm registry this project is developed against serves only Linux builds of some platform
 * packages (@next/swc-*, @unrs/resolver-binding-*). npm then leaves the other platforms out of
 * package-lock.json, and `npm ci` refuses the lock ("Missing: … from lock file"). This script adds
 * the missing optional platform entries (version, os, cpu, optional) that a full registry would
 * have written, so `npm ci` works here and everywhere; npm skips them on other platforms without
 * fetching. Run it after `npm install` changes the lock: `node scripts/lockfile-platforms.mjs`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

const file = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(file, 'utf8'));
const packages = lock.packages;
const PLATFORM = /^(@next\/swc|@unrs\/resolver-binding)-(android|darwin|freebsd|linux|openharmony|win32|wasm32)-([a-z0-9]+)/;
let added = 0;

for (const [path, entry] of Object.entries({ ...packages })) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const match = PLATFORM.exec(name);
    if (!match) continue;
    const dir = path ? `${path.replace(/\/node_modules\/[^/]+(\/[^/]+)?$/, '')}` : '';
    const candidates = [`${path}/node_modules/${name}`, `${dir ? `${dir}/` : ''}node_modules/${name}`, `node_modules/${name}`];
    if (candidates.some((c) => packages[c])) continue;
    const [, , os, arch] = match;
    const cpu = os === 'wasm32' ? 'wasm32' : arch === 'eabi' ? 'arm' : arch;
    packages[`node_modules/${name}`] = {
      version,
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os === 'wasm32' ? 'any' : os].filter((o) => o !== 'any'),
      cpu: [cpu],
    };
    if (packages[`node_modules/${name}`].os.length === 0) delete packages[`node_modules/${name}`].os;
    added++;
  }
}

lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : a > b ? 1 : 0)),
);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} optional platform entries`);
