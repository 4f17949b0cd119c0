/**
 * The memory-overhead annotation's bytes as KubeVirt's controllers write them into a VMI's
 * `status.memory.memoryOverhead` and a migration's `targetMemoryOverhead`: a BinarySI quantity
 * (the live differential lane found ours writing the plain byte string).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bytesAsBinaryQuantity } from '../../shared/api/quantity.ts';

describe('bytesAsBinaryQuantity', () => {
  const cases: ReadonlyArray<[string, string | undefined]> = [
    ['302252032', '295168Ki'],
    ['1073741824', '1Gi'],
    ['1536', '1536'],
    ['1000', '1k'],
    ['0', '0'],
    ['12.5', undefined],
    ['295168Ki', undefined],
    ['', undefined],
  ];
  for (const [bytes, want] of cases) {
    test(`${JSON.stringify(bytes)} → ${want ?? 'none (KubeVirt leaves the field)'}`, () => {
      // act
      const got = bytesAsBinaryQuantity(bytes);
      // assert
      assert.equal(got, want);
    });
  }
});
