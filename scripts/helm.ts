/**
 * The upstream Helm CLI (infra/helm/cli.ts) from the command line, built on first use:
 *
 *   node scripts/helm.ts build              # npm run helm:build
 *   node scripts/helm.ts -- lint infra/helm/virt-reconciler   # any Helm command (npm run helm -- …)
 */
import { existsSync } from 'node:fs';
import { ensureHelm, helm, helmPath } from '../infra/helm/cli.ts';

const [cmd, ...rest] = process.argv.slice(2);
try {
  if (cmd === 'build' || cmd === undefined) {
    const path = helmPath();
    if (existsSync(path)) process.stdout.write(`helm: up to date (${path})\n`);
    else await ensureHelm((l) => process.stdout.write(`${l}\n`));
  } else {
    const args = cmd === '--' ? rest : [cmd, ...rest];
    const r = await helm(args, { cwd: process.cwd() });
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    process.exit(r.status);
  }
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
