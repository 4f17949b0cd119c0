/**
 * Running the real kubectl against the sandbox cluster: a started `startSandbox()` cluster, a
 * private discovery cache, and `kubectl(...)` returning exit code, stdout and stderr. kubectl
 * runs as a child process (asynchronously: the emulator serves it from this process's event
 * loop). `KUBECTL` overrides the binary; the suite skips when there is none.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';

/** The kubectl binary, or undefined when this machine has none. */
export const KUBECTL: string | undefined = (() => {
  const candidates = [process.env.KUBECTL, '/usr/bin/kubectl', '/usr/local/bin/kubectl'].filter((c): c is string => !!c);
  return candidates.find((c) => {
    try {
      accessSync(c, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
})();

/** What a kubectl run printed. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A sandbox cluster with a kubectl pointed at it. */
export interface KubectlCluster {
  sandbox: Sandbox;
  dir: string;
  /** Runs kubectl with `args`; `stdin` is piped in (for `-f -`). Never rejects on a non-zero exit. */
  kubectl(args: string[], stdin?: string): Promise<KubectlResult>;
  /** Starts a long-running kubectl (`get -w`); stop it with `.kill()`. */
  spawnKubectl(args: string[]): ChildProcess;
  /** Writes a manifest into the cluster's folder; returns its path. */
  manifest(name: string, text: string): Promise<string>;
  stop(): Promise<void>;
}

/** kubectl's environment for a cluster: its kubeconfig, and a HOME and cache of its own under `dir`. */
function kubectlEnv(kubeconfig: string, dir: string): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, 'cache'), HOME: dir };
}

/**
 * Runs the real kubectl with `args` against `kubeconfig` (HOME and cache under `dir`); `stdin` is
 * piped in (for `-f -`). Never rejects on a non-zero exit: the code is in the result.
 */
export function runKubectl(at: { kubeconfig: string; dir: string; timeoutMs?: number }, args: string[], stdin?: string): Promise<KubectlResult> {
  return new Promise((resolve) => {
    const child = execFile(KUBECTL!, args, { env: kubectlEnv(at.kubeconfig, at.dir), timeout: at.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

/** Starts a sandbox and a kubectl environment for it. */
export async function startKubectlCluster(): Promise<KubectlCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'vr-kubectl-'));
  const sandbox = await startSandbox({ kubeconfigOut: join(dir, 'kubeconfig') });
  const env = kubectlEnv(sandbox.kubeconfigPath, dir);
  const kubectl = (args: string[], stdin?: string): Promise<KubectlResult> => runKubectl({ kubeconfig: sandbox.kubeconfigPath, dir }, args, stdin);
  return {
    sandbox,
    dir,
    kubectl,
    spawnKubectl: (args) => spawn(KUBECTL!, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }),
    async manifest(name, text) {
      const path = join(dir, name);
      await writeFile(path, text);
      return path;
    },
    async stop() {
      await sandbox.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The header row of `kubectl get` output, as column names. */
export function headerOf(output: string): string[] {
  return (output.split('\n')[0] ?? '').trim().split(/\s{2,}/);
}

/** The row of `kubectl get` output whose first column is `name`, as cells. */
export function rowOf(output: string, name: string): string[] | undefined {
  return output.split('\n').map((l) => l.trim().split(/\s{2,}/)).find((cells) => cells[0] === name);
}

/** The `skip` option of a kubectl suite: a one-line reason when there is no kubectl. */
export const SKIP_WITHOUT_KUBECTL: string | false = KUBECTL ? false : 'kubectl not found (set KUBECTL or install it): skipping the kubectl suite';

/** Registers before/after hooks that start and stop a cluster; returns it once started. */
export function useKubectlCluster(): () => KubectlCluster {
  let cluster: KubectlCluster | undefined;
  before(async () => {
    cluster = await startKubectlCluster();
  });
  after(async () => {
    await cluster?.stop();
  });
  return () => cluster!;
}
