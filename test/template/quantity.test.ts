import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { InvalidInputError } from '../../shared/errors.ts';
import { addQuantity, canonicalQuantity, formatQuantity, parseQuantity, quantityOf, quantityValue } from '../../shared/api/quantity.ts';

describe('quantity parsing and canonical form (Kubernetes resource.Quantity)', () => {
  const canonical: Array<[string, string]> = [
    ['1Gi', '1Gi'], ['1024Mi', '1Gi'], ['1536Mi', '1536Mi'], ['1G', '1G'], ['1000M', '1G'], ['100m', '100m'],
    ['0.5', '500m'], ['1.5Gi', '1536Mi'], ['1e3', '1e3'], ['12e6', '12e6'], ['1000', '1k'], ['1500m', '1500m'],
    ['512', '512'], ['0', '0'], ['0.1m', '100u'], ['1n', '1n'], ['1303943013', '1303943013'], ['-1Gi', '-1Gi'],
    ['1.0000000001', '1000000001n'], ['8192Ki', '8Mi'], ['.5', '500m'],
  ];
  for (const [input, want] of canonical) {
    test(`${input} → ${want}`, () => assert.equal(canonicalQuantity(input), want));
  }

  test('1G + 303943013 renders as 1303943013 (decimal format kept, no exact suffix)', () => {
    assert.equal(formatQuantity(addQuantity(parseQuantity('1G'), quantityOf(303943013n))), '1303943013');
  });

  test('binary quantities below 1024 print in decimal', () => {
    assert.equal(formatQuantity(quantityOf(512, 'BinarySI')), '512');
  });

  test('Value() rounds up', () => {
    assert.equal(quantityValue(parseQuantity('2500m')), 3n);
  });

  for (const bad of ['', 'abc', '1Gb', '1.2.3', 'Gi', '1 Gi', '--1', '1e']) {
    test(`'${bad}' is rejected with a typed error naming the field`, () => {
      assert.throws(() => parseQuantity(bad, 'spec.x'), (e: unknown) => e instanceof InvalidInputError && e.field === 'spec.x');
    });
  }

  test('format ∘ parse keeps the value for any whole number of bytes in any format, and canonical form is a fixpoint', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 60n }), fc.constantFrom('BinarySI', 'DecimalSI') as fc.Arbitrary<'BinarySI' | 'DecimalSI'>, (n, f) => {
      const s = formatQuantity(quantityOf(n, f));
      assert.equal(parseQuantity(s).nanos, n * 1_000_000_000n, `${n} → ${s}`);
      // A BinarySI amount that is no multiple of 1024 prints as bare digits, which parse back as
      // DecimalSI (Kubernetes does the same: 1025 in BinarySI → "1025" → "1025", but
      // 634142444610335000 → "634142444610335000" → "634142444610335k"); so the fixpoint is the
      // canonical string, and for DecimalSI the formatted string itself.
      const canonical = canonicalQuantity(s);
      assert.equal(canonicalQuantity(canonical), canonical, `${s} → ${canonical}`);
      if (f === 'DecimalSI') assert.equal(canonical, s);
    }));
  });

  test('a BinarySI amount that is no multiple of 1024 prints as digits and reads back as DecimalSI', () => {
    const s = formatQuantity(quantityOf(634142444610335000n, 'BinarySI'));
    assert.equal(s, '634142444610335000');
    assert.equal(canonicalQuantity(s), '634142444610335k');
  });
});
