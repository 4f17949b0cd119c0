import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricsRegistry } from '../../shared/metrics/registry.ts';
import { publishEmf } from '../../shared/metrics/emf.ts';

test('Prometheus text: counters, gauges and histograms with labels, as /metrics serves them', () => {
  // arrange
  const m = new MetricsRegistry();
  m.inc('reconcile_total', 'Reconciles by result', { controller: 'vmi', result: 'done' });
  m.inc('reconcile_total', 'Reconciles by result', { controller: 'vmi', result: 'done' });
  m.set('workqueue_depth', 'Depth', { name: 'vmi' }, 7);
  m.observe('reconcile_time_seconds', 'Time per reconcile', { controller: 'vmi' }, 0.02);
  // act
  const text = m.render();
  // assert
  assert.match(text, /# TYPE reconcile_total counter\nreconcile_total\{controller="vmi",result="done"\} 2/);
  assert.match(text, /workqueue_depth\{name="vmi"\} 7/);
  assert.match(text, /reconcile_time_seconds_bucket\{controller="vmi",le="0.025"\} 1/);
  assert.match(text, /reconcile_time_seconds_count\{controller="vmi"\} 1/);
});

test('totals, sums and quantiles read back what was recorded', () => {
  const m = new MetricsRegistry();
  for (const v of [0.004, 0.02, 0.02, 0.3]) m.observe('reconcile_time_seconds', 'h', { controller: 'vmi' }, v);
  m.observe('reconcile_time_seconds', 'h', { controller: 'vm' }, 1);
  assert.equal(m.total('reconcile_time_seconds'), 5);
  assert.equal(m.total('reconcile_time_seconds', { controller: 'vmi' }), 4);
  assert.ok(Math.abs(m.sum('reconcile_time_seconds', { controller: 'vmi' }) - 0.344) < 1e-9);
  assert.equal(m.quantile('reconcile_time_seconds', 0.5, { controller: 'vmi' }), 0.025);
  assert.equal(m.quantile('reconcile_time_seconds', 0.99, { controller: 'vmi' }), 0.5);
});

test('EMF: one line per series with the labels as dimensions; histograms as raw values; the registry is drained', () => {
  // arrange
  const m = new MetricsRegistry();
  m.inc('reconcile_total', 'r', { controller: 'vmi', result: 'done' }, 3);
  m.observe('api_calls_per_reconcile', 'c', { controller: 'vmi' }, 2);
  m.observe('api_calls_per_reconcile', 'c', { controller: 'vmi' }, 4);
  const lines: string[] = [];
  // act
  const n = publishEmf(m, 'VirtReconciler', (l) => lines.push(l), () => 1_000);
  // assert
  assert.equal(n, 2);
  const [counter, hist] = lines.map((l) => JSON.parse(l) as Record<string, unknown> & { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } });
  assert.deepEqual(counter!._aws.CloudWatchMetrics[0], { Namespace: 'VirtReconciler', Dimensions: [['controller', 'result']], Metrics: [{ Name: 'reconcile_total', Unit: 'Count' }] });
  assert.equal(counter!.reconcile_total, 3);
  assert.equal(counter!.result, 'done');
  assert.deepEqual(hist!.api_calls_per_reconcile, [2, 4]);
  assert.equal(publishEmf(m, 'VirtReconciler', () => undefined), 0, 'drained');
});
