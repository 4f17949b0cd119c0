import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiException } from '@kubernetes/client-node';
import { InvalidInputError, isPermanent, TransientError } from '../../shared/errors.ts';
import { AlreadyExistsError, KubeInvalidError, KubeRequestError, KubeTransientError, NotFoundError, toKubeError, type ApiRequest } from '../../shared/kube/errors.ts';

const GET: ApiRequest = { verb: 'get', resource: 'pods', namespace: 'ns', name: 'p' };
const PATCH: ApiRequest = { verb: 'patch', resource: 'virtualmachineinstances', namespace: 'ns', name: 'v' };

function status(code: number, reason: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `${reason} happened`, ...extra });
}

// The three shapes client-node throws (docs/kube-client.md, "client-node as it behaves on the wire"), built as client-node builds them.
describe('toKubeError maps every client-node error shape', () => {
  const cases: ReadonlyArray<{ name: string; err: unknown; req?: ApiRequest; cls: Function; reason: string; permanent: boolean }> = [
    { name: 'ApiException 404', err: new ApiException(404, 'x', status(404, 'NotFound'), {}), cls: NotFoundError, reason: 'NotFound', permanent: false },
    { name: 'ApiException 409 AlreadyExists', err: new ApiException(409, 'x', status(409, 'AlreadyExists'), {}), cls: AlreadyExistsError, reason: 'AlreadyExists', permanent: false },
    { name: 'ApiException 409 Conflict', err: new ApiException(409, 'x', status(409, 'Conflict'), {}), cls: KubeTransientError, reason: 'Conflict', permanent: false },
    { name: 'ApiException 422 Invalid', err: new ApiException(422, 'x', status(422, 'Invalid', { details: { causes: [{ reason: 'FieldValueRequired', field: 'metadata.name' }] } }), {}), cls: KubeInvalidError, reason: 'Invalid', permanent: true },
    { name: 'ApiException 422 on a patch whose test failed', req: PATCH, err: new ApiException(422, 'x', status(422, 'Invalid', { details: { causes: [{ reason: 'UnexpectedServerResponse', message: 'testing value /status/phase failed' }] } }), {}), cls: KubeTransientError, reason: 'Conflict', permanent: false },
    { name: 'ApiException 422 on a patch whose test failed, as kube-apiserver v1.37 answers (generic message, empty details)', req: PATCH, err: new ApiException(422, 'x', status(422, 'Invalid', { message: 'the server rejected our request due to an error in our request', details: {} }), {}), cls: KubeTransientError, reason: 'Conflict', permanent: false },
    { name: 'ApiException 422 with the generic message on a create stays Invalid', err: new ApiException(422, 'x', status(422, 'Invalid', { message: 'the server rejected our request due to an error in our request', details: {} }), {}), cls: KubeInvalidError, reason: 'Invalid', permanent: true },
    {
      name: 'ApiException 422 refusing a finalizer on an object being deleted (the object changed: retried, as KubeVirt does)',
      req: PATCH,
      err: new ApiException(422, 'x', status(422, 'Invalid', { message: 'VirtualMachine.kubevirt.io "vm" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"snapshot.kubevirt.io/snapshot-source-protection"}', details: { causes: [{ reason: 'FieldValueForbidden', field: 'metadata.finalizers' }] } }), {}),
      cls: KubeTransientError,
      reason: 'Conflict',
      permanent: false,
    },
    { name: 'ApiException 403 with a text body', err: new ApiException(403, 'x', 'forbidden: nope', {}), cls: KubeRequestError, reason: 'Http403', permanent: false },
    { name: 'watch Error with statusCode 500', err: Object.assign(new Error('watch failed'), { statusCode: 500 }), cls: KubeTransientError, reason: 'ServerError', permanent: false },
    { name: 'network TypeError with cause ECONNREFUSED', err: new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) }), cls: KubeTransientError, reason: 'ServerError', permanent: false },
    { name: 'socket reset UND_ERR_SOCKET', err: new TypeError('terminated', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) }), cls: KubeTransientError, reason: 'ServerError', permanent: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      // act
      const mapped = toKubeError(c.err, c.req ?? GET);
      // assert
      assert.ok(mapped instanceof c.cls, `expected ${c.cls.name}, got ${String(mapped)}`);
      assert.equal((mapped as { reason: string }).reason, c.reason);
      assert.equal(isPermanent(mapped), c.permanent);
    });
  }

  test('transient and invalid errors extend the project hierarchy', () => {
    assert.ok(toKubeError(new ApiException(500, 'x', '', {}), GET) instanceof TransientError);
    assert.ok(toKubeError(new ApiException(422, 'x', status(422, 'Invalid'), {}), GET) instanceof InvalidInputError);
  });

  test('an unrecognised error passes through unchanged (reported as a bug)', () => {
    const bug = new RangeError('oops');
    assert.equal(toKubeError(bug, GET), bug);
  });
});
