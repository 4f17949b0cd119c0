/**
 * The real control plane's build (sandbox/real/build.ts) from the command line:
 *
 *   node scripts/control-plane.ts build      # npm run control-plane:build
 *   node scripts/control-plane.ts path       # prints the binary's path (building it when needed)
 */
import { existsSync } from 'node:fs';
import { binaryPath, ensureBuilt } from '../sandbox/real/build.ts';

const cmd = process.argv[2] ?? 'build';
try {
  if (cmd === 'build') {
    const path = binaryPath();
    if (existsSync(path)) process.stdout.write(`control-plane: up to date (${path})\n`);
    else await ensureBuilt((l) => process.stdout.write(`${l}\n`));
  } else if (cmd === 'path') {
    process.stdout.write(`${await ensureBuilt()}\n`);
  } else {
    process.stderr.write('usage: node scripts/control-plane.ts build|path\n');
    process.exit(2);
  }
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
