/**
 * A restore's patches that set a string to "" (a clone clears the firmware serial and UUID) leave
 * the field absent in the VM it creates, as KubeVirt's decoding into `omitempty` Go fields does
 * (the live differential lane found ours creating `firmware.serial: ""`).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { dropEmptyPatchedStrings } from '../../../functions/restore/target.ts';
import { applyJsonPatch } from '../../../shared/kube/json-patch-apply.ts';
import type { JsonPatchOperation } from '../../../shared/kube/client.ts';

describe('dropEmptyPatchedStrings', () => {
  test('fields the patches set to "" are dropped; other empty strings and other values stay', () => {
    // arrange
    const vm = { spec: { template: { spec: { domain: { firmware: { serial: 'old', uuid: 'u' }, devices: { interfaces: [{ name: 'default', macAddress: '02:00:00:00:00:01' }] } } } } }, metadata: { labels: { keep: '' } } };
    const ops: JsonPatchOperation[] = [
      { op: 'replace', path: '/spec/template/spec/domain/firmware/serial', value: '' },
      { op: 'replace', path: '/spec/template/spec/domain/firmware/uuid', value: '' },
      { op: 'replace', path: '/spec/template/spec/domain/devices/interfaces/0/macAddress', value: '02:00:00:bb:bb:bb' },
    ];
    // act
    const out = dropEmptyPatchedStrings(applyJsonPatch(vm, ops), ops);
    // assert
    assert.deepEqual(out.spec.template.spec.domain.firmware, {}, 'serial and uuid absent, not ""');
    assert.equal(out.spec.template.spec.domain.devices.interfaces[0]!.macAddress, '02:00:00:bb:bb:bb');
    assert.deepEqual(out.metadata.labels, { keep: '' }, 'a "" no patch wrote stays');
  });
});
