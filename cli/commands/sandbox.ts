/**
 * `virt-reconciler sandbox`: runs the sandbox cluster standalone on 127.0.0.1 — the API server
 * emulator (or the real control plane) with simulated nodes, scheduler, kubelet and
 * virt-handler — until Ctrl-C or SIGTERM.
 */
import { CliError, controlPlaneFlag, intFlag, parseFlags, type Command } from '../command.ts';

const HELP = `usage: virt-reconciler sandbox [--nodes N] [--port P] [--speed X] [--kubeconfig-out FILE] [--control-plane emulator|real]

Runs a local Kubernetes API server emulator with N simulated KubeVirt nodes (default 3) on
127.0.0.1:P (default any free port). --speed X runs simulated time X times faster (default 1).
Writes a kubeconfig to FILE (default a new temporary directory) and prints its path.
--control-plane real runs the real kube-apiserver, kube-controller-manager and kube-scheduler
(built from the Kubernetes Go modules on first use: long the first time; see
docs/control-plane.md) instead of the emulator; --port is then ignored (a free port is used).
Ctrl-C or SIGTERM stops it.`;

function speedFlag(value: string | undefined): number {
  if (value === undefined) return 1;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`--speed takes a number > 0, got '${value}'`);
  return n;
}

export const command: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, {
      nodes: { type: 'string' },
      port: { type: 'string' },
      speed: { type: 'string' },
      'kubeconfig-out': { type: 'string' },
      'control-plane': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const nodes = intFlag('nodes', values.nodes, 3, 1);
    const port = intFlag('port', values.port, 0, 0);
    if (port > 65535) throw new CliError(`--port takes a whole number <= 65535, got '${values.port}'`);
    const speed = speedFlag(values.speed);
    const kubeconfigOut = values['kubeconfig-out'];
    const controlPlane = controlPlaneFlag(values['control-plane']);

    const { startSandbox } = await import('../../sandbox/sandbox.ts');
    const sandbox = await startSandbox({
      nodes,
      // with the storage side (CSI snapshotter, provisioner, CDI, export server, backup agent)
      storage: true,
      port,
      speed,
      ...(kubeconfigOut ? { kubeconfigOut } : {}),
      ...(controlPlane ? { controlPlane } : {}),
      log: (line) => process.stderr.write(`${line}\n`),
      onError: (what, err) => process.stderr.write(`sandbox: ${what}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}\n`),
    });
    process.stdout.write(
      [
        `sandbox cluster (${sandbox.controlPlane === 'real' ? 'real Kubernetes control plane' : 'API server emulator'}) running at ${sandbox.apiServer.url} with ${sandbox.nodeNames.length} node(s): ${sandbox.nodeNames.join(', ')}`,
        `kubeconfig: ${sandbox.kubeconfigPath}`,
        `use it:     export KUBECONFIG=${sandbox.kubeconfigPath}   (or virt-reconciler up --kubeconfig ${sandbox.kubeconfigPath})`,
        `stop:       Ctrl-C`,
        '',
      ].join('\n'),
    );
    await new Promise<void>((resolve) => {
      const done = () => resolve();
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
    await sandbox.stop();
    process.stdout.write('sandbox stopped\n');
    return 0;
  },
};
