/**
 * The real CLI (`bin/virt-reconciler.js`) in a child process, as an operator runs it. Async, so
 * servers in the test's own process (a sandbox, fauxqs) keep answering meanwhile.
 */
import { execFile } from 'node:child_process';
import { projectRoot } from './reference.ts';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `virt-reconciler <args>` with `env` over the test's environment. */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['bin/virt-reconciler.js', ...args], { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr }),
    );
  });
}
