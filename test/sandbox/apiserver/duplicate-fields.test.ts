/**
 * Repeated keys in a JSON body (duplicate-fields.ts): the quick check that most bodies pass (no
 * repeats, no paths spelled) must agree with the full scan on escapes, nesting and strings that
 * look like structure.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duplicateJsonFields } from '../../../sandbox/apiserver/duplicate-fields.ts';

test('a body without repeated keys has none, however its strings and escapes look', () => {
  for (const text of [
    '{}',
    '[]',
    '{"a":1,"b":{"a":2,"b":[{"a":3},{"a":4}]}}',
    '{"a":"{\\"a\\":1,\\"a\\":2}","b":"a"}',
    '{"a\\\\":1,"a":2}',
    '{"x":"ends in a backslash\\\\","y":"\\"quoted\\""}',
    '{ "a" : 1 , "b" :\n 2, "c":[ "a", "a" ] }',
    '{"\\u0061b":1,"ac":2}',
  ]) {
    assert.deepEqual(duplicateJsonFields(text), [], text);
  }
});

test('repeats are found, escaped or not, in document order with their paths', () => {
  assert.deepEqual(duplicateJsonFields('{"a":1,"a":2}'), ['a']);
  assert.deepEqual(duplicateJsonFields('{"spec":{"ports":[{"hostPort":1,"hostPort":2}]}}'), ['spec.ports[0].hostPort']);
  assert.deepEqual(duplicateJsonFields('{"ab":1,"\\u0061b":2}'), ['ab']);
  assert.deepEqual(duplicateJsonFields('{"a":"x\\\\","b":{"c":1},"b":{"c":2,"c":3}}'), ['b', 'b.c']);
  assert.deepEqual(duplicateJsonFields('{ "a" : 1 ,\n "a" : 2 }'), ['a']);
  assert.deepEqual(duplicateJsonFields('[{"op":"add","path":"/a","path":"/b"}]'), ['[0].path']);
});
