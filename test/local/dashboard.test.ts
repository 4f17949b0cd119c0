/**
 * The local dashboard in a real browser (the npm registry's headless Chromium, scripts/chromium.ts,
 * driven by playwright-core; never a system browser, which the first test checks) over a real
 * local runtime on the sandbox cluster: the page renders, a burst of VMIs moves the depth chart,
 * a dead-lettered key is replayed with a click and the DLQ empties, a key typed in the trace box
 * shows its timeline. Leaves screenshots at test-output/dashboard.png and dashboard-trace.png.
 */
import { CONTROLLERS } from '../../shared/controllers.ts';
import assert from 'node:assert/strict';
import { mkdirSync, readlinkSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { chromium, type Browser, type Page } from 'playwright-core';
import { RecentErrors } from '../../local/dashboard/recent-errors.ts';
import { startDashboard, type Dashboard } from '../../local/dashboard/server.ts';
import { clusterMigrations } from '../../ops/trace/collect.ts';
import { LocalRuntime } from '../../local/runtime.ts';
import { startSandbox, type Sandbox } from '../../sandbox/sandbox.ts';
import { VMIS, type VirtualMachineInstance } from '../../shared/api/index.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { jsonLogger } from '../../shared/metrics/log.ts';
import { vmiManifest } from '../e2e/support.ts';
import { keyMessage } from '../queue/conformance.ts';
import { projectRoot } from '../support/reference.ts';
import { chromiumInstall, chromiumLaunchOptions } from '../../scripts/chromium.ts';

const BURST = 30;

let sandbox: Sandbox;
let rt: LocalRuntime;
let kube: KubeClient;
let dashboard: Dashboard;
let browser: Browser;
let page: Page;

before(async () => {
  sandbox = await startSandbox({ nodes: 3, timings: { podStartupMs: 200, vmiBootMs: 200 } });
  const kubeConfig = sandbox.apiServer.kubeConfig('admin');
  kube = createKubeClient(kubeConfig);
  const recentErrors = new RecentErrors();
  const log = jsonLogger({}, { write: (l) => recentErrors.record(l) });
  // One VMI worker so a burst visibly queues; no migration worker, so the poison key below
  // stays where the test puts it.
  rt = new LocalRuntime({ kubeConfig, dbPath: ':memory:', log, workers: { vmi: 1, migration: 0 } });
  rt.start();
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const vmiPhases = async (): Promise<Record<string, number>> => {
    const list = (await custom.listClusterCustomObject({ group: VMIS.group, version: VMIS.version, plural: VMIS.plural })) as { items: VirtualMachineInstance[] };
    const out: Record<string, number> = {};
    for (const v of list.items) out[v.status?.phase ?? ''] = (out[v.status?.phase ?? ''] ?? 0) + 1;
    return out;
  };
  dashboard = await startDashboard({ source: rt, vmiPhases, recentErrors, port: 0, sampleMs: 100, trace: { traces: rt.state.traces, migrationsOf: clusterMigrations(kube) } });
  // The npm package's browser, inflated on first use (npm test has done it up front).
  browser = await chromium.launch(chromiumLaunchOptions());
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await browser?.close();
  await dashboard?.close();
  await rt?.stop();
  await sandbox?.stop();
});

test('the browser is the npm registry\'s Chromium, not a system one (no apt step: /usr/bin/chromium is never used)', async () => {
  // arrange: the browser process's own executable, from the browser itself
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { type: string; id: number }[] };
  await cdp.detach();
  const main = processInfo.find((p) => p.type === 'browser');
  assert.ok(main, `the browser reports its own process: ${JSON.stringify(processInfo)}`);
  // act
  const exe = readlinkSync(`/proc/${main.id}/exe`);
  // assert
  const install = chromiumInstall();
  assert.ok(install, '@sparticuz/chromium is installed (npm ci)');
  assert.equal(exe, realpathSync(install.executable), 'the running browser is the one inflated from the npm package into .cache/chromium/');
  assert.notEqual(exe, '/usr/bin/chromium');
  assert.equal(browser.version().split('.')[0], install.version.split('.')[0], "the browser's major version is the package's");
});

/** What the chart holds, from the data attributes the page keeps on it. */
async function chart(): Promise<{ points: number; max: number }> {
  const svg = page.locator('#depth-chart');
  return { points: Number(await svg.getAttribute('data-points')), max: Number(await svg.getAttribute('data-max')) };
}

test('the dashboard: renders, charts a burst of VMIs, replays a dead-lettered key from a click', async () => {
  // arrange: the page, before any load
  await page.goto(dashboard.url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30_000 });
  const title = await page.title();
  const queueRows = await page.$$eval('#queues tbody tr', (rows) => rows.map((r) => r.getAttribute('data-controller')));
  const alertsNote = await page.textContent('#alerts tbody');
  const idle = await chart();

  // act 1: a burst of VMIs
  await Promise.all(Array.from({ length: BURST }, (_, i) => kube.create(VMIS, vmiManifest(`burst-${i}`))));
  // (page-side expressions as strings: this project compiles without the DOM typings)
  await page.waitForFunction(`Number(document.getElementById('depth-chart').dataset.max) > 0`, undefined, { timeout: 60_000 });
  await page.waitForFunction(
    `[...document.querySelectorAll('#phases .bar .n')].reduce((s, e) => s + Number(e.textContent), 0) >= ${BURST}`,
    undefined,
    { timeout: 60_000 },
  );
  const busy = await chart();
  const lines = await page.$$eval('#depth-chart polyline', (ps) => ps.map((p) => p.getAttribute('data-controller')));

  // act 2: a poison key dead-lettered on the queue directly, then replayed from the page
  await rt.queue.send([keyMessage('default/poison', 1, 'ADDED', 'migration')]);
  const [held] = await rt.queue.receive('migration', 1, 2000);
  assert.ok(held, 'the poison key was received');
  await rt.queue.deadLetter('migration', held.receipt, { reason: 'PoisonKey', message: 'fails every time it is reconciled' });
  const row = page.locator('#dlq tr[data-key="default/poison"]');
  await row.waitFor({ timeout: 10_000 });
  const reasonShown = await row.locator('td').nth(2).textContent();
  mkdirSync(join(projectRoot, 'test-output'), { recursive: true });
  await page.screenshot({ path: join(projectRoot, 'test-output', 'dashboard.png'), fullPage: true });
  await row.locator('button.replay').click();
  await page.waitForSelector('#dlq td.empty', { timeout: 10_000 });
  const resultText = await page.textContent('#replay-result');
  const left = await rt.queue.listDeadLetters();
  const migration = await rt.queue.depth('migration');

  // assert
  assert.equal(title, 'virt-reconciler · local');
  assert.deepEqual(queueRows, [...CONTROLLERS], 'one queue row per controller');
  assert.match(alertsNote ?? '', /no Prometheus configured: start with --prometheus URL/, 'the alerts panel says how to feed it');
  // The nodes' own events (start-up, heartbeats) queue node and evacuation keys at any time: at
  // most one per node and controller, nothing like the burst.
  assert.ok(idle.max <= 2 * 3, `nothing but node keys queued before the burst (max ${idle.max})`);
  assert.ok(busy.max > 0, `the chart shows the burst (max depth ${busy.max})`);
  assert.ok(busy.points > idle.points, `the chart gained points (${idle.points} → ${busy.points})`);
  assert.deepEqual(lines, [...CONTROLLERS], 'one line per controller');
  assert.equal(reasonShown, 'PoisonKey');
  assert.equal(resultText, 'replayed 1');
  assert.deepEqual(left, [], 'the DLQ is empty after the replay');
  assert.equal(migration.visible, 1, 'the key is back on its queue');
});

test('the dashboard: a key typed in the trace box shows its timeline, event → message → reconcile → writes', async () => {
  // arrange: a VMI of the burst, Running (the test above created and ran them)
  await page.waitForFunction(`[...document.querySelectorAll('#phases .bar[data-phase="Running"] .n')].some((e) => Number(e.textContent) >= 1)`, undefined, { timeout: 60_000 });
  const running = (await kube.list(VMIS, 'default')).items.find((v) => v.status?.phase === 'Running')?.metadata?.name;
  assert.ok(running, 'a VMI of the burst is Running');
  // act
  await page.fill('#trace-target', `vmi/default/${running}`);
  await page.press('#trace-target', 'Enter');
  await page.waitForSelector('#trace tr[data-step="write"]', { timeout: 10_000 });
  const steps = await page.$$eval('#trace tbody tr', (rows) => rows.map((r) => `${r.getAttribute('data-step')} ${r.lastElementChild?.textContent ?? ''}`));
  const summary = await page.textContent('#trace-summary');
  await page.screenshot({ path: join(projectRoot, 'test-output', 'dashboard-trace.png'), fullPage: true });
  await page.fill('#trace-target', 'pod/default/x');
  await page.press('#trace-target', 'Enter');
  await page.waitForFunction(`document.getElementById('trace-summary').textContent.includes('unknown kind')`, undefined, { timeout: 10_000 });
  // assert
  assert.match(summary ?? '', new RegExp(`^vmi/default/${running}: \\d+ reconciles, \\d+ writes — vmi default/${running} \\(\\d+\\)`));
  assert.deepEqual(steps.slice(0, 3).map((s) => s.split(' ')[0]), ['event', 'message', 'reconcile'], 'each reconcile: its event, its message, then it');
  const podCreate = steps.findIndex((s) => new RegExp(`^write create pods default/virt-launcher-${running}-\\w+ → 201$`).test(s));
  assert.ok(podCreate > 0, `the launcher pod's create is on the timeline:\n${steps.join('\n')}`);
});

test('the dashboard: /metrics, /healthz and a refused replay request', async () => {
  // act
  const metrics = await (await fetch(`${dashboard.url}metrics`)).text();
  const health = await fetch(`${dashboard.url}healthz`);
  const noFilter = await fetch(`${dashboard.url}api/replay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  const form = await fetch(`${dashboard.url}api/replay`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'all=true' });
  // assert
  assert.match(metrics, /^# TYPE reconcile_time_seconds histogram$/m);
  assert.match(metrics, /^workqueue_depth\{name="vmi"\} \d+$/m);
  assert.match(metrics, /^reconcile_total\{controller="vmi",result="done"\} \d+$/m);
  assert.equal(health.status, 200);
  assert.equal(noFilter.status, 400, 'replay must name a key or say all, as the CLI');
  assert.equal(form.status, 415, 'a cross-site form post is refused');
});

test('recent errors: keeps the last warn/error lines with their context, drops info and junk', () => {
  // arrange
  const ring = new RecentErrors(2);
  const log = jsonLogger({ controller: 'vmi' }, { write: (l) => ring.record(l) });
  // act
  log.info('reconciled', { key: 'default/a' });
  log.warn('reconcile failed', { key: 'default/b', reason: 'Conflict', error: 'the object has been modified' });
  ring.record('not json at all');
  log.error('could not settle key', { key: 'default/c' });
  log.error('queue receive failed', { error: 'database is locked' });
  // assert
  assert.deepEqual(
    ring.list().map((e) => [e.level, e.message, e.key ?? '', e.reason ?? '']),
    [
      ['error', 'queue receive failed', '', ''],
      ['error', 'could not settle key', 'default/c', ''],
    ],
    'newest first, only the last 2 kept',
  );
  assert.equal(ring.total, 3, 'three warn/error lines seen in all');
  assert.equal(ring.list()[0]?.controller, 'vmi', 'context fields come along');
});
