/**
 * The rule file the project ships (infra/monitoring/kubevirt-rules.yaml, KubeVirt's with only its
 * virt-controller matchers changed) under Prometheus's own tools: `promtool check rules`, and
 * `promtool test rules` for the alerts issue 32 names with their real `for:` durations (the live
 * Prometheus test shortens them: test/e2e/prometheus-alerts.test.ts), fed with series labelled
 * as our exposition and the relay's scrape target label them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { projectRoot } from '../support/reference.ts';
import { NO_PROMTOOL, PROMTOOL } from './support/kubevirt-exposition.ts';

const RULES = join(projectRoot, 'infra/monitoring/kubevirt-rules.yaml');
const POD = 'namespace="virt-reconciler",pod="virt-reconciler-relay-7d9f"';

/** The alert's labels as the rule file adds them (severity and the operator labels). */
function ruleLabels(alert: string): Record<string, string> {
  const text = readFileSync(RULES, 'utf8');
  const block = text.slice(text.indexOf(`- alert: ${alert}\n`)).split(/\n  - (?:alert|expr|record):/)[0]!;
  const labels = block.slice(block.indexOf('\n    labels:\n') + 12).split('\n').filter((l) => /^      \S/.test(l));
  return Object.fromEntries(labels.map((l) => l.trim().split(': ') as [string, string]));
}

function promtoolTest(tests: string, evaluationInterval = '1m'): { code: number; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'vr-promtool-'));
  try {
    writeFileSync(join(dir, 'test.yaml'), `rule_files:\n  - ${RULES}\nevaluation_interval: ${evaluationInterval}\ntests:\n${tests}`);
    const r = spawnSync(PROMTOOL!, ['test', 'rules', join(dir, 'test.yaml')], { encoding: 'utf8' });
    return { code: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One alert-test case: at `at`, `alert` is firing with `labels` (its rule's own added), or not at all. */
function alertCase(at: string, alert: string, labels: Record<string, string> | undefined, annotations: Record<string, string> = {}): string {
  const expect = labels === undefined ? '        exp_alerts: []' : [
    '        exp_alerts:',
    '          - exp_labels:',
    ...Object.entries({ ...labels, ...ruleLabels(alert) }).map(([k, v]) => `              ${k}: ${JSON.stringify(v.replace(/^['"]|['"]$/g, ''))}`),
    ...(Object.keys(annotations).length ? ['            exp_annotations:', ...Object.entries(annotations).map(([k, v]) => `              ${k}: ${JSON.stringify(v)}`)] : []),
  ].join('\n');
  return `      - eval_time: ${at}\n        alertname: ${alert}\n${expect}\n`;
}

function annotationsOf(alert: string, vars: Record<string, string> = {}): Record<string, string> {
  const text = readFileSync(RULES, 'utf8');
  const block = text.slice(text.indexOf(`- alert: ${alert}\n`));
  const out: Record<string, string> = {};
  const ann = block.slice(block.indexOf('annotations:\n') + 13, block.indexOf('\n    expr:'));
  // Folded YAML scalars: join continuation lines, then fill in the template's label references.
  for (const m of ann.replace(/\n {8}/g, ' ').matchAll(/^ {6}(\w+): (.*)$/gm)) {
    let v = m[2]!.trim().replace(/^'(.*)'$/, '$1');
    v = v.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, k: string) => vars[k] ?? '');
    out[m[1]!] = v;
  }
  return out;
}

describe("KubeVirt's rule file under promtool", { skip: PROMTOOL ? false : NO_PROMTOOL }, () => {
  it('promtool check rules passes', () => {
    // act
    const r = spawnSync(PROMTOOL!, ['check', 'rules', RULES], { encoding: 'utf8' });
    // assert
    assert.equal(r.status, 0, `promtool check rules: ${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /SUCCESS: 98 rules found/, 'all of KubeVirt\'s 59 recording rules and 39 alerts load');
  });

  // [name, tests, evaluation interval]: a day-long case steps in 10 min (samples as often, so none is missed).
  const cases: [string, string, string?][] = [
    [
      'NoLeadingVirtController: quiet while the relay leads, fires 10 min after its series end',
      `  - interval: 1m
    input_series:
      - series: 'kubevirt_virt_controller_leading_status{${POD}}'
        values: '1x30 _x60'
    alert_rule_test:
${alertCase('25m', 'NoLeadingVirtController', undefined)}${alertCase('40m', 'NoLeadingVirtController', undefined)}${alertCase('50m', 'NoLeadingVirtController', {}, annotationsOf('NoLeadingVirtController'))}`,
    ],
    [
      'NoReadyVirtController: quiet while the relay pod is ready and says so, fires 10 min after',
      `  - interval: 1m
    input_series:
      - series: 'kubevirt_virt_controller_ready_status{${POD}}'
        values: '1x30 0x60'
      - series: 'kube_pod_status_ready{${POD},condition="true"}'
        values: '1x90'
    alert_rule_test:
${alertCase('25m', 'NoReadyVirtController', undefined)}${alertCase('35m', 'NoReadyVirtController', undefined)}${alertCase('45m', 'NoReadyVirtController', {}, annotationsOf('NoReadyVirtController'))}`,
    ],
    [
      'VMCannotBeEvicted: pending for its first minute, then firing',
      `  - interval: 30s
    input_series:
      - series: 'kubevirt_vmi_non_evictable{name="db",namespace="prod",node="node01",${POD.replace('namespace="virt-reconciler",', '')}}'
        values: '1x10'
      - series: 'kubevirt_vmi_info{name="db",namespace="prod",node="node01",phase="running",${POD.replace('namespace="virt-reconciler",', '')}}'
        values: '1x10'
    alert_rule_test:
${alertCase('30s', 'VMCannotBeEvicted', undefined)}${alertCase('2m', 'VMCannotBeEvicted', { name: 'db', namespace: 'prod', node: 'node01', vm: 'db', pod: 'virt-reconciler-relay-7d9f' }, annotationsOf('VMCannotBeEvicted', { name: 'db', namespace: 'prod', node: 'node01' }))}`,
    ],
    [
      'OutdatedVirtualMachineInstanceWorkloads: only after 24 h of outdated launchers',
      `  - interval: 10m
    input_series:
      - series: 'kubevirt_vmi_number_of_outdated{${POD}}'
        values: '2x156'
    alert_rule_test:
${alertCase('23h', 'OutdatedVirtualMachineInstanceWorkloads', undefined)}${alertCase('25h', 'OutdatedVirtualMachineInstanceWorkloads', { namespace: 'virt-reconciler', pod: 'virt-reconciler-relay-7d9f' }, annotationsOf('OutdatedVirtualMachineInstanceWorkloads'))}`,
      '10m',
    ],
    [
      'KubeVirtVMIExcessiveMigrations: at the 12th succeeded migration of one VMI within a day',
      `  - interval: 1m
    input_series:
${Array.from({ length: 12 }, (_, i) => `      - series: 'kubevirt_vmi_migration_succeeded{vmi="db",vmim="m${i}",namespace="prod",pod="virt-reconciler-relay-7d9f"}'\n        values: '${'_ '.repeat(i)}1x20'`).join('\n')}
    alert_rule_test:
${alertCase('5m', 'KubeVirtVMIExcessiveMigrations', undefined)}${alertCase('12m', 'KubeVirtVMIExcessiveMigrations', { vmi: 'db', namespace: 'prod', vm: 'db' }, annotationsOf('KubeVirtVMIExcessiveMigrations', { vmi: 'db', namespace: 'prod' }))}`,
    ],
  ];
  for (const [name, test, interval] of cases) {
    it(name, () => {
      // act
      const r = promtoolTest(test, interval);
      // assert
      assert.equal(r.code, 0, `promtool test rules:\n${r.output}`);
    });
  }
});
