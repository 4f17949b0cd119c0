/**
 * The corpus without a cluster (docs/fidelity.md): every case's launcher pod rendered in process
 * by the template service — from KubeVirt's defaulted VMI, the case's KubeVirt CR and the facts
 * its objects give (shared/template/cluster-facts.ts, what `virt-reconciler render --objects`
 * uses) — against KubeVirt's pod as its template service printed it. Neither pod went through an
 * API server, so no server defaults are on either side. The same normalisation as the
 * differential test; a seconds-long check of the renderer (and the CLI's facts) alone, on any
 * machine.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeVirt } from '../../shared/api/index.ts';
import { clusterConfigFromKubeVirt } from '../../shared/config/cluster-config.ts';
import { renderFactsFromObjects } from '../../shared/template/cluster-facts.ts';
import { renderLauncherPod } from '../../shared/template/render-launcher-pod.ts';
import { renderTempPod } from '../../shared/template/render-temp-pod.ts';
import { caseOptions } from '../../scripts/gen-differential.ts';
import { kubevirtCr, loadCorpus, ORACLE_VMI_UID, type DifferentialCase } from './corpus.ts';
import { OFFLINE_EXPECTED_DIFFERENCES } from './expected-differences.ts';
import { diffPods, formatDifferences, type Difference } from './pod-diff.ts';

const corpus = loadCorpus();

/** Renders the case as KubeVirt's oracle did: its defaulted VMI with the oracle's UID, the launcher image virt-operator would give. */
function renderCase(c: DifferentialCase): { pod: V1Pod } | { error: string } {
  const cr = kubevirtCr(c) as KubeVirt | undefined;
  const imageArg = c.meta.renderOracle.indexOf('--launcher-image');
  const config = clusterConfigFromKubeVirt(cr, imageArg >= 0 ? { launcherImage: c.meta.renderOracle[imageArg + 1]! } : {});
  if (c.kubevirt.kind !== 'pod') {
    // KubeVirt refused and wrote no defaulted VMI: the VMI as written (only the outcome counts).
    try {
      renderLauncherPod({ ...c.vmi, metadata: { ...c.vmi.metadata, uid: ORACLE_VMI_UID } }, config, renderFactsFromObjects(c.objects, c.vmi, config));
      return { pod: {} };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }
  const vmi = structuredClone(c.kubevirt.vmi);
  vmi.metadata = { ...vmi.metadata, uid: ORACLE_VMI_UID };
  const temp = (caseOptions(c.dir).renderOracleArgs ?? []).includes('--no-vm');
  try {
    return { pod: (temp ? renderTempPod : renderLauncherPod)(vmi, config, renderFactsFromObjects(c.objects, vmi, config)) };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

function differences(c: DifferentialCase): Difference[] {
  const ours = renderCase(c);
  if (c.kubevirt.kind === 'error') {
    return 'error' in ours ? [] : [{ path: '(outcome)', ours: 'a launcher pod', kubevirt: `refused: ${c.kubevirt.message}` }];
  }
  if ('error' in ours) return [{ path: '(outcome)', ours: `refused: ${ours.error}`, kubevirt: 'a launcher pod' }];
  return diffPods(ours.pod, c.kubevirt.pod);
}

describe(`the corpus rendered offline: ${corpus.length} cases against KubeVirt's own template service`, () => {
  for (const c of corpus) {
    test(c.name, () => {
      // arrange
      const expected = OFFLINE_EXPECTED_DIFFERENCES[c.name];
      // act
      const diffs = differences(c);
      const paths = [...new Set(diffs.map((d) => d.path))].sort();
      // assert
      if (!expected) {
        assert.equal(paths.length, 0, `${c.name}: the renderer's pod differs from KubeVirt's (${c.meta.kubevirtCommit.slice(0, 12)}):\n${formatDifferences(diffs)}`);
        return;
      }
      assert.ok(paths.length > 0, `${c.name} renders identically now: remove its entry from OFFLINE_EXPECTED_DIFFERENCES (cause was: ${expected.cause})`);
      assert.deepEqual(paths, [...expected.paths].sort(), `${c.name}: the differences changed (known cause: ${expected.cause}):\n${formatDifferences(diffs)}`);
    });
  }
});
