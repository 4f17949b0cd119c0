/**
 * `virt-reconciler`: the operator's tool. One entry, one file per command under `commands/`.
 * Bad input gets a one-line error on stderr and exit code 2, never a stack trace.
 */
import { CliError, type Command } from './command.ts';

/** Commands are loaded lazily so `render` does not pay for the Kubernetes client, and so on. */
const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  up: { summary: 'run the relay and controllers locally (npm start): sandbox or kubeconfig cluster', load: async () => (await import('./commands/up.ts')).command },
  sandbox: { summary: 'run the local sandbox cluster (API server + simulated nodes)', load: async () => (await import('./commands/sandbox.ts')).command },
  render: { summary: 'render the launcher, migration target or hotplug attachment pod for a VMI/VM manifest', load: async () => (await import('./commands/render.ts')).command },
  queues: { summary: 'queue depth per controller: visible, in flight, delayed, dead-lettered, oldest (--db or --aws)', load: async () => (await import('./commands/queues.ts')).command },
  dlq: { summary: 'dlq list: dead-lettered keys with reason, attempts, first and last failure', load: async () => (await import('./commands/dlq.ts')).command },
  trace: { summary: 'trace <vm|vmi|migration|replicaset|pool>/<ns>/<name> or node/<name>: event → message → reconcile → writes for the object and its children', load: async () => (await import('./commands/trace.ts')).command },
  diagnose: { summary: 'diagnose <vmi|vm|migration|replicaset|pool|snapshot>/<ns>/<name> or node/<name>: why it is stuck, verdict first, then the evidence (exit 1 = problem)', load: async () => (await import('./commands/diagnose.ts')).command },
  status: { summary: "who holds virt-controller's Lease and since when; whether we write", load: async () => (await import('./commands/status.ts')).command },
  takeover: { summary: "take virt-controller's Lease from the live virt-controller (docs/cutover.md)", load: async () => (await import('./commands/takeover.ts')).command },
  handback: { summary: "stop writing, let in-flight keys settle, release virt-controller's Lease", load: async () => (await import('./commands/handback.ts')).command },
  divergences: { summary: 'shadow mode: writes we would have made that the live virt-controller did not (--controller C, --json)', load: async () => (await import('./commands/divergences.ts')).command },
  replay: { summary: 'put dead-lettered keys back on their queue (--key ns/name or --all)', load: async () => (await import('./commands/replay.ts')).command },
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: virt-reconciler <command> [flags]\n\ncommands:\n${lines.join('\n')}\n\nRun 'virt-reconciler <command> --help' for a command's flags.`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  // Own keys only: `toString` and friends are not commands (the argv fuzz test found it).
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    process.stderr.write(`virt-reconciler: unknown command '${name}'\n\n${usage()}\n`);
    return 2;
  }
  try {
    const command = await entry.load();
    return await command.run(rest);
  } catch (err) {
    if (err instanceof CliError) {
      process.stderr.write(`virt-reconciler ${name}: ${err.message}\n`);
      return err.exitCode;
    }
    throw err;
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
