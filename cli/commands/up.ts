/**
 * `virt-reconciler up` (what `npm start` runs): relay + functions in one process over the
 * embedded queue and table, against a kubeconfig cluster (given or found) or else the sandbox.
 */
import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../shared/kube/config.ts';
import { jsonLogger } from '../../shared/metrics/log.ts';
import { VMIS } from '../../shared/api/index.ts';
import { LocalRuntime } from '../../local/runtime.ts';
import { applyManifests, readManifests } from '../../local/examples.ts';
import { formatSnapshot, snapshot } from '../../local/progress.ts';
import { RecentErrors } from '../../local/dashboard/recent-errors.ts';
import { DEFAULT_DASHBOARD_PORT, startDashboard, type Dashboard } from '../../local/dashboard/server.ts';
import { prometheusUrl } from '../../local/dashboard/alerts.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { InvalidInputError } from '../../shared/errors.ts';
import { CliError, controlPlaneFlag, intFlag, parseFlags, type Command } from '../command.ts';
import { SANDBOX_KUBECONFIG } from '../ops-backend.ts';
import { clusterMigrations } from '../../ops/trace/collect.ts';
import type { LocalCutover } from '../../local/cutover.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import { identityOf } from '../lease-flags.ts';
import { impersonationFromEnv, KUBEVIRT_IDENTITY_ENV } from '../../shared/kube/kubevirt-identity.ts';

function readManifestsOrExplain(dir: string): ReturnType<typeof readManifests> {
  try {
    return readManifests(dir);
  } catch (err) {
    if (err instanceof InvalidInputError) throw new CliError(err.message);
    throw err;
  }
}

const HELP = `usage: virt-reconciler up [flags]

Runs the relay and the controllers in one process over an embedded SQLite queue and table.

  --kubeconfig FILE     use this cluster (default: $KUBECONFIG or ~/.kube/config, else the sandbox)
  --sandbox             always start the built-in sandbox cluster
  --nodes N             sandbox nodes (default 3)
  --control-plane CP    the sandbox's API server: emulator (default) or real (kube-apiserver,
                        kube-controller-manager, kube-scheduler; built on first use)
  --examples DIR        manifests to apply at start (default: ./examples on the sandbox, none otherwise)
  --no-examples         apply nothing
  --data-dir DIR        where the queue/table database and the log live (default .data)
  --batch-size N        keys a worker reconciles together, 1-10, as a Lambda FIFO batch (default 1)
  --exit-when-settled   exit 0 once every example VMI is handed off (Scheduled or later)
  --timeout SECONDS     with --exit-when-settled: give up after this long, exit 1 (default 120)
  --log-stderr          structured logs to stderr instead of <data-dir>/virt-reconciler.log
  --dashboard-port P    web dashboard on http://127.0.0.1:P/ (default ${DEFAULT_DASHBOARD_PORT}; 0 = any free port)
  --no-dashboard        do not start the web dashboard
  --prometheus URL      a Prometheus that scrapes this runtime's /metrics with KubeVirt's rules
                        (infra/monitoring/kubevirt-rules.yaml): the dashboard shows its alerts
  --shadow              beside a live virt-controller: every write is a dry run (dryRun=All), compared
                        with what the live one did ('virt-reconciler divergences'; docs/cutover.md)
  --kubevirt-namespace NS  where virt-controller's Lease is (default kubevirt)
  --identity NAME       our holder identity in the Lease (default $VR_LEASE_IDENTITY, else virt-reconciler)

Without --shadow, up takes virt-controller's Lease when it is free and writes only while it holds
it; when a live virt-controller holds it, up says so and exits (use --shadow, then 'takeover').`;

const HANDED_OFF = new Set(['Scheduled', 'Running', 'Succeeded']);

/** Takes virt-controller's Lease when free; the one-line refusal when a live holder has it. */
async function leadOrExplain(cutover: LocalCutover): Promise<string | undefined> {
  try {
    const r = await cutover.acquire();
    if (r.acquired) return undefined;
    const since = r.renewedAt ? `, renewed ${Math.round((Date.now() - r.renewedAt) / 1000)} s ago` : '';
    return `virt-controller's Lease is held by ${r.holder}${since}: a live virt-controller runs here; run 'virt-reconciler up --shadow' beside it, then 'virt-reconciler takeover' (docs/cutover.md)`;
  } catch (err) {
    if (err instanceof NotFoundError) return `no namespace '${cutover.lease.namespace}' for virt-controller's Lease: pass --kubevirt-namespace (KubeVirt's namespace)`;
    return `could not take virt-controller's Lease: ${err instanceof Error ? err.message : String(err)}`;
  }
}

export const command: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, {
      kubeconfig: { type: 'string' },
      sandbox: { type: 'boolean' },
      nodes: { type: 'string' },
      'control-plane': { type: 'string' },
      examples: { type: 'string' },
      'no-examples': { type: 'boolean' },
      'data-dir': { type: 'string' },
      'batch-size': { type: 'string' },
      'exit-when-settled': { type: 'boolean' },
      timeout: { type: 'string' },
      'log-stderr': { type: 'boolean' },
      'dashboard-port': { type: 'string' },
      'no-dashboard': { type: 'boolean' },
      prometheus: { type: 'string' },
      shadow: { type: 'boolean' },
      'kubevirt-namespace': { type: 'string' },
      identity: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const nodes = intFlag('nodes', values.nodes, 3, 1);
    const controlPlane = controlPlaneFlag(values['control-plane']);
    if (controlPlane && values.kubeconfig) throw new CliError('--control-plane picks the sandbox\'s API server; it cannot be used with --kubeconfig');
    const timeoutSeconds = intFlag('timeout', values.timeout, 120, 1);
    const batchSize = intFlag('batch-size', values['batch-size'], 1, 1);
    if (batchSize > 10) throw new CliError(`--batch-size takes 1-10 (an SQS FIFO batch holds at most 10 keys), got '${batchSize}'`);
    const dashboardPort = intFlag('dashboard-port', values['dashboard-port'], DEFAULT_DASHBOARD_PORT, 0);
    if (dashboardPort > 65535) throw new CliError(`--dashboard-port takes a port number 0-65535, got '${dashboardPort}'`);
    const dataDir = resolve(values['data-dir'] ?? '.data');
    let prometheus: string | undefined;
    if (values.prometheus !== undefined) {
      try {
        prometheus = prometheusUrl(values.prometheus);
      } catch (err) {
        throw new CliError(err instanceof Error ? err.message : String(err));
      }
      if (values['no-dashboard']) throw new CliError('--prometheus feeds the dashboard\'s alerts panel; it cannot be used with --no-dashboard');
    }
    if (values.examples && !existsSync(values.examples)) throw new CliError(`--examples: no such folder '${values.examples}'`);

    // The cluster: given, found, or our own sandbox.
    const useKubeconfig = Boolean(values.kubeconfig || (!values.sandbox && !controlPlane && (process.env.KUBECONFIG || existsSync(join(process.env.HOME ?? '', '.kube', 'config')))));
    // Read (and so validate) the manifests before starting anything: a broken file is a one-line
    // error, not a half-started runtime.
    const exampleDir = values['no-examples'] ? undefined : (values.examples ?? (useKubeconfig ? undefined : 'examples'));
    const manifests = exampleDir && existsSync(exampleDir) ? readManifestsOrExplain(exampleDir) : [];
    try {
      mkdirSync(dataDir, { recursive: true });
    } catch (err) {
      throw new CliError(`--data-dir: cannot create '${dataDir}': ${err instanceof Error ? err.message : String(err)}`);
    }

    let kubeConfig: KubeConfig;
    let sandbox: Sandbox | undefined;
    if (useKubeconfig) {
      try {
        const loaded = loadKubeConfig(values.kubeconfig ? { file: values.kubeconfig } : {});
        kubeConfig = loaded.kubeConfig;
        process.stdout.write(`cluster: ${loaded.description}\n`);
      } catch (err) {
        throw new CliError(err instanceof Error ? err.message : String(err));
      }
    } else {
      // The kubeconfig goes next to the database, where `trace` and `diagnose` look for the cluster.
      // The storage side too (CSI snapshotter, provisioner, CDI, export server, backup agent): a user's
      // snapshots, restores, exports and clones complete as on a cluster with those operators.
      sandbox = await startSandbox({ nodes, storage: true, ...(controlPlane ? { controlPlane } : {}), kubeconfigOut: join(dataDir, SANDBOX_KUBECONFIG), log: (line) => process.stderr.write(`${line}
`) });
      kubeConfig = sandbox.apiServer.kubeConfig('admin');
      process.stdout.write(`cluster: sandbox at ${sandbox.apiServer.url} with ${nodes} nodes, ${sandbox.controlPlane === 'real' ? 'real Kubernetes control plane' : 'API server emulator'} (kubeconfig ${sandbox.kubeconfigPath})\n`);
    }

    const logStream = values['log-stderr'] ? undefined : createWriteStream(join(dataDir, 'virt-reconciler.log'), { flags: 'a' });
    const dbPath = join(dataDir, 'virt-reconciler.db');
    // Every line also goes to the dashboard's "recent errors" (it keeps only warn/error lines).
    const recentErrors = new RecentErrors();
    const log = jsonLogger({}, {
      write: (l) => {
        recentErrors.record(l);
        if (logStream) logStream.write(l + '\n');
        else process.stderr.write(l + '\n');
      },
    });
    const mode = values.shadow ? 'shadow' : 'lead';
    // --kubevirt-namespace, else KUBEVIRT_NAMESPACE as the Lambda functions read it: where the
    // Lease is, and whose kubevirt-controller the VMI writes act as (docs/kube-client.md);
    // VR_IMPERSONATE_KUBEVIRT=false only for a cluster without virt-api.
    const kubevirtNamespace = values['kubevirt-namespace'] ?? process.env[KUBEVIRT_IDENTITY_ENV.namespace]?.trim();
    const rt = new LocalRuntime({
      kubeConfig, dbPath, log, batchSize,
      impersonateKubeVirt: impersonationFromEnv(process.env) !== undefined,
      ...(kubevirtNamespace ? { kubevirtNamespace } : {}),
      cutover: { mode, identity: identityOf({ identity: values.identity }), ...(kubevirtNamespace ? { namespace: kubevirtNamespace } : {}) },
    });
    const cutover = rt.cutover!;
    if (mode === 'lead') {
      const refusal = await leadOrExplain(cutover);
      if (refusal) {
        await rt.stop();
        await sandbox?.stop();
        throw new CliError(refusal, 1);
      }
    }
    rt.start();
    process.stdout.write(mode === 'shadow' ? `shadow mode: every write is a dry run; 'virt-reconciler divergences' lists what the live virt-controller did differently\n` : `virt-controller's Lease (${cutover.lease.namespace}): held by us (${cutover.lease.identity})\n`);
    process.stdout.write(`queue and table: ${dbPath}\nlogs: ${logStream ? join(dataDir, 'virt-reconciler.log') : 'stderr'}\n`);

    let exampleVmis: string[] = [];
    if (manifests.length > 0) {
      try {
        await applyManifests(kubeConfig, manifests);
      } catch (err) {
        await rt.stop();
        await sandbox?.stop();
        throw new CliError(`applying ${exampleDir}/: ${err instanceof Error ? err.message : String(err)}`, 1);
      }
      // A running VM's VMI carries the VM's name: wait for it as for the VMIs themselves.
      const runs = (m: { object: { kind?: string; spec?: unknown } }) => {
        if (m.object.kind === 'VirtualMachineInstance') return true;
        const spec = (m.object.spec ?? {}) as { runStrategy?: string; running?: boolean };
        return m.object.kind === 'VirtualMachine' && (spec.running === true || ['Always', 'RerunOnFailure', 'Once'].includes(spec.runStrategy ?? ''));
      };
      exampleVmis = manifests.filter(runs).map((m) => `${m.object.metadata?.namespace ?? 'default'}/${m.object.metadata?.name}`);
      process.stdout.write(`applied ${manifests.length} objects from ${exampleDir}/ (${exampleVmis.length} VMIs to wait for, VMs' included)\n`);
    }

    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const phasesByKey = async (): Promise<Map<string, string>> => {
      const list = (await custom.listClusterCustomObject({ group: VMIS.group, version: VMIS.version, plural: VMIS.plural })) as { items: { metadata: { namespace: string; name: string }; status?: { phase?: string } }[] };
      return new Map(list.items.map((v) => [`${v.metadata.namespace}/${v.metadata.name}`, v.status?.phase ?? '']));
    };
    const phaseCounts = async () => {
      const counts: Record<string, number> = {};
      for (const p of (await phasesByKey()).values()) counts[p] = (counts[p] ?? 0) + 1;
      return counts;
    };

    let dashboard: Dashboard | undefined;
    if (!values['no-dashboard']) {
      const trace = { traces: rt.state.traces, migrationsOf: clusterMigrations(rt.kube) };
      const divergences = mode === 'shadow' ? { divergences: () => cutover.divergences.list() } : {};
      const open = (port: number) => startDashboard({ source: rt, vmiPhases: phaseCounts, recentErrors, port, trace, ...divergences, ...(prometheus ? { prometheus } : {}) });
      try {
        dashboard = await open(dashboardPort);
      } catch (err) {
        // The default port may be taken (a second `up`): any free port beats no dashboard. A port
        // the user asked for is not silently replaced.
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || values['dashboard-port'] !== undefined) {
          await rt.stop();
          await sandbox?.stop();
          throw new CliError(`dashboard: cannot listen on 127.0.0.1:${dashboardPort}: ${err instanceof Error ? err.message : String(err)}`, 1);
        }
        dashboard = await open(0);
        process.stdout.write(`dashboard: port ${dashboardPort} is in use, using ${dashboard.port}\n`);
      }
      process.stdout.write(`dashboard: ${dashboard.url}\nmetrics: ${dashboard.url}metrics (KubeVirt's virt-controller metrics, Prometheus text)\n`);
    }

    let stopping = false;
    const stop = async (code: number): Promise<number> => {
      if (stopping) return code;
      stopping = true;
      process.stdout.write('\nstopping: flushing the relay, settling in-flight keys…\n');
      await dashboard?.close();
      await rt.stop();
      await sandbox?.stop();
      logStream?.end();
      process.stdout.write('stopped cleanly; queued keys are kept in the database for the next start\n');
      return code;
    };

    const tty = process.stdout.isTTY;
    const started = Date.now();
    return new Promise<number>((resolvePromise) => {
      const onSignal = () => void stop(0).then(resolvePromise);
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      let ticks = 0;
      const tick = async () => {
        if (stopping) return;
        try {
          const line = formatSnapshot(await snapshot(rt, phaseCounts));
          if (tty) process.stdout.write(`\r\x1b[K${line}`);
          else if (ticks % 5 === 0) process.stdout.write(line + '\n');
          ticks++;
          if (values['exit-when-settled']) {
            const phases = await phasesByKey();
            const waiting = exampleVmis.filter((k) => !HANDED_OFF.has(phases.get(k) ?? ''));
            if (waiting.length === 0) {
              process.stdout.write(`\nsettled: all ${exampleVmis.length} example VMIs handed off\n`);
              return resolvePromise(await stop(0));
            }
            if (Date.now() - started > timeoutSeconds * 1000) {
              process.stdout.write(`\nnot settled after ${timeoutSeconds}s: ${waiting.map((k) => `${k} (${phases.get(k) || 'no phase'})`).join(', ')}\n`);
              return resolvePromise(await stop(1));
            }
          }
        } catch (err) {
          process.stdout.write(`\nprogress: ${err instanceof Error ? err.message : String(err)}\n`);
        }
        setTimeout(() => void tick(), 1000);
      };
      setTimeout(() => void tick(), 500);
    });
  },
};
