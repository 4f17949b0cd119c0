/**
 * A real Prometheus (Debian's `prometheus` package; .ci/run installs it) for the tests: started
 * on 127.0.0.1 with a temporary configuration and data directory, a 1 s scrape and evaluation
 * interval, scraping one target as the in-cluster ServiceMonitor would (honor_labels, the relay
 * pod's namespace and pod name as target labels), with rule files loaded. Read through its HTTP
 * API.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export const PROMETHEUS = ['/usr/bin/prometheus', '/usr/local/bin/prometheus'].find((p) => existsSync(p));
export const NO_PROMETHEUS = 'skipped: prometheus is not installed (apt-get install prometheus; .ci/run installs it)';

/** The relay's namespace and a pod name of its Deployment, as the shipped rules match them. */
export const RELAY_TARGET_LABELS = { namespace: 'virt-reconciler', pod: 'virt-reconciler-relay-local' } as const;

export interface Alert {
  readonly labels: Readonly<Record<string, string>>;
  readonly state: 'pending' | 'firing';
}

export interface Prometheus {
  readonly url: string;
  alerts(): Promise<Alert[]>;
  /** An instant query's vector: labels and value of each series. */
  query(expr: string): Promise<{ labels: Record<string, string>; value: number }[]>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts Prometheus scraping `target` (`host:port`, path /metrics) with `ruleFiles` (contents by file name). */
export async function startPrometheus(target: string, ruleFiles: Readonly<Record<string, string>>): Promise<Prometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'vr-prometheus-'));
  for (const [name, text] of Object.entries(ruleFiles)) await writeFile(join(dir, name), text);
  const config = [
    'global:',
    '  scrape_interval: 1s',
    '  evaluation_interval: 1s',
    'rule_files:',
    ...Object.keys(ruleFiles).map((n) => `  - ${join(dir, n)}`),
    'scrape_configs:',
    '  - job_name: virt-reconciler',
    '    honor_labels: true',
    '    scrape_timeout: 1s',
    '    static_configs:',
    `      - targets: ['${target}']`,
    '        labels:',
    ...Object.entries(RELAY_TARGET_LABELS).map(([k, v]) => `          ${k}: ${v}`),
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config + '\n');
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const log: string[] = [];
  const proc: ChildProcess = spawn(PROMETHEUS!, [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  const keep = (b: Buffer) => {
    log.push(...b.toString().split('\n').filter(Boolean));
    if (log.length > 200) log.splice(0, log.length - 200);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const get = async (path: string): Promise<unknown> => {
    const res = await fetch(url + path);
    const body = (await res.json()) as { status: string; data: unknown; error?: string };
    if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
    return body.data;
  };
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`prometheus exited (${proc.exitCode}):\n${log.slice(-20).join('\n')}`);
    const ok = await fetch(`${url}/-/ready`).then((r) => r.ok, () => false);
    if (ok) break;
    if (i > 300) throw new Error(`prometheus not ready after 30 s:\n${log.slice(-20).join('\n')}`);
    await sleep(100);
  }
  return {
    url,
    alerts: async () => ((await get('/api/v1/alerts')) as { alerts: Alert[] }).alerts,
    query: async (expr) => {
      const data = (await get(`/api/v1/query?query=${encodeURIComponent(expr)}`)) as { result: { metric: Record<string, string>; value: [number, string] }[] };
      return data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
    },
    async stop() {
      proc.kill('SIGTERM');
      await new Promise((r) => (proc.exitCode !== null ? r(undefined) : proc.once('exit', r)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The rule file with every `for:` shortened (the live test's copy; `promtool test rules` checks the real durations). */
export function withShortFor(rules: string, to = '1s'): string {
  return rules.replace(/^(\s*)for: \S+$/gm, `$1for: ${to}`);
}

/**
 * kube-state-metrics' readiness and phase of the relay pod, as recording rules. The local runtime
 * is not a pod, so no kube-state-metrics can report it; in a cluster the real one does. A mock,
 * and the only one: KubeVirt's ready rule joins the pod's readiness with our gauge.
 */
export const KUBE_STATE_STAND_IN = `groups:
- name: kube-state-metrics-stand-in
  rules:
  - record: kube_pod_status_ready
    expr: vector(1)
    labels: { namespace: ${RELAY_TARGET_LABELS.namespace}, pod: ${RELAY_TARGET_LABELS.pod}, condition: 'true' }
  - record: kube_pod_status_phase
    expr: vector(1)
    labels: { namespace: ${RELAY_TARGET_LABELS.namespace}, pod: ${RELAY_TARGET_LABELS.pod}, phase: Running }
`;
