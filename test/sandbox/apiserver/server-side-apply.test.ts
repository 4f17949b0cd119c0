/**
 * managedFields and server-side apply as k8s.io/apiserver answers them: FieldsV1 of update-style
 * writes (list-map keys from the schema, `.` for paths that are members and parents), the
 * manager derived from the User-Agent, apply create/update, shared ownership of equal values,
 * 409 conflicts with upstream's message and causes, `force=true`, list items merged by key, and
 * the request errors (missing fieldManager, wrong version, repeated YAML keys, force on a
 * non-apply patch). Raw HTTP, so the bodies and headers are the server's own; on both lanes (the
 * texts were checked against kube-apiserver 1.37 with VR_CONTROL_PLANE=real).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiFetch, startSandbox, type Sandbox } from './support.ts';

interface Answer {
  status: number;
  body: Record<string, any>;
  warnings: string;
}

const CM = '/api/v1/namespaces/default/configmaps';
const PODS = '/api/v1/namespaces/default/pods';
const APPLY = 'application/apply-patch+yaml';

function configMap(name: string, data: Record<string, string>): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
}

describe('managedFields and server-side apply', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await startSandbox();
  });
  after(() => sb.server.close());

  async function call(method: string, path: string, body: string | undefined, contentType = 'application/json', userAgent = 'kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef'): Promise<Answer> {
    const res = await apiFetch(sb, path, { method, ...(body !== undefined ? { body } : {}), headers: { 'Content-Type': contentType, 'User-Agent': userAgent } });
    return { status: res.status, body: (await res.json()) as Record<string, any>, warnings: res.headers.get('warning') ?? '' };
  }
  const managers = (o: Record<string, any>): string[] => (o.metadata.managedFields ?? []).map((m: any) => `${m.manager}/${m.operation}`);

  test('a create records an Update entry: list items by their map keys, "." for members with children, defaults owned by the creator', async () => {
    // act
    const pod = JSON.stringify({ metadata: { name: 'mf', labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx', env: [{ name: 'A', value: '1' }] }] } });
    const r = await call('POST', `${PODS}?fieldManager=kubectl-create`, pod);
    // assert
    assert.equal(r.status, 201);
    const [entry] = r.body.metadata.managedFields;
    assert.deepEqual({ ...entry, time: 'T' }, { manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: 'T', fieldsType: 'FieldsV1', fieldsV1: entry.fieldsV1 });
    assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(entry.fieldsV1['f:metadata'], { 'f:labels': { '.': {}, 'f:app': {} } });
    const nginx = entry.fieldsV1['f:spec']['f:containers']['k:{"name":"nginx"}'];
    assert.deepEqual(nginx['f:env'], { '.': {}, 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} } }, 'a list that appears is a member too');
    assert.equal(entry.fieldsV1['f:spec']['f:containers']['.'], undefined, 'containers is a required list: present (null) in an empty Pod');
    assert.deepEqual([nginx['.'], nginx['f:image'], nginx['f:name']], [{}, {}, {}]);
    assert.deepEqual(entry.fieldsV1['f:spec']['f:restartPolicy'], {}, 'defaulted fields belong to the creator');
    assert.equal(entry.fieldsV1['f:status'], undefined, 'status belongs to the status subresource');
  });

  test('without ?fieldManager the manager is the User-Agent up to its first "/"; a change takes the field from its owner', async () => {
    // act
    const r = await call('PATCH', `${PODS}/mf`, '{"metadata":{"labels":{"app":"api"}}}', 'application/strategic-merge-patch+json');
    // assert
    const entries = new Map<string, any>(r.body.metadata.managedFields.map((m: any) => [`${m.manager}/${m.operation}`, m]));
    assert.deepEqual(entries.get('kubectl/Update')?.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:app': {} } } });
    assert.equal(entries.get('kubectl-create/Update')?.fieldsV1['f:metadata']['f:labels']['f:app'], undefined);
  });

  test('apply without fieldManager is a 422 on PatchOptions', async () => {
    // act
    const r = await call('PATCH', `${CM}/nomgr`, configMap('nomgr', { a: '1' }), APPLY);
    // assert
    assert.equal(r.status, 422);
    assert.equal(r.body.message, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
  });

  test('apply creates (201) with an Apply entry of exactly the applied fields, then updates (200)', async () => {
    // act
    const created = await call('PATCH', `${CM}/applied?fieldManager=alice`, configMap('applied', { a: '1' }), APPLY);
    const updated = await call('PATCH', `${CM}/applied?fieldManager=alice`, configMap('applied', { a: '2', b: '3' }), APPLY);
    // assert
    assert.equal(created.status, 201);
    assert.equal(updated.status, 200);
    assert.deepEqual(updated.body.data, { a: '2', b: '3' });
    assert.deepEqual(updated.body.metadata.managedFields.map((m: any) => [m.manager, m.operation, m.fieldsV1]), [['alice', 'Apply', { 'f:data': { 'f:a': {}, 'f:b': {} } }]]);
  });

  const conflicts: Array<{ name: string; data: Record<string, string>; message: string; fields: string[] }> = [
    { name: 'one field', data: { a: '9' }, message: 'Apply failed with 1 conflict: conflict with "alice": .data.a', fields: ['.data.a'] },
    { name: 'two fields', data: { a: '9', b: '9' }, message: 'Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\n- .data.b', fields: ['.data.a', '.data.b'] },
  ];
  for (const c of conflicts) {
    test(`another applier changing ${c.name} is a 409 naming fields and manager`, async () => {
      // act
      const r = await call('PATCH', `${CM}/applied?fieldManager=bob`, configMap('applied', c.data), APPLY);
      // assert
      assert.equal(r.status, 409);
      assert.equal(r.body.reason, 'Conflict');
      assert.equal(r.body.message, c.message);
      assert.deepEqual(r.body.details.causes, c.fields.map((field) => ({ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field })));
    });
  }

  test('an Update manager in a conflict is printed with its apiVersion', async () => {
    // arrange
    await call('POST', `${CM}?fieldManager=kubectl-create`, configMap('updated', { a: '1' }));
    // act
    const r = await call('PATCH', `${CM}/updated?fieldManager=alice`, configMap('updated', { a: '2' }), APPLY);
    // assert
    assert.equal(r.body.message, 'Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.a');
  });

  test('applying the same value shares ownership; force takes a field over', async () => {
    // act
    const shared = await call('PATCH', `${CM}/applied?fieldManager=bob`, configMap('applied', { b: '3' }), APPLY);
    const forced = await call('PATCH', `${CM}/applied?fieldManager=bob&force=true`, configMap('applied', { a: '9', b: '3' }), APPLY);
    // assert
    assert.equal(shared.status, 200);
    // bob changed nothing: his entry has no time yet, so it sorts first
    assert.deepEqual(shared.body.metadata.managedFields.map((m: any) => [m.manager, Object.keys(m.fieldsV1['f:data']), m.time === undefined]), [['bob', ['f:b'], true], ['alice', ['f:a', 'f:b'], false]]);
    assert.equal(forced.status, 200);
    assert.equal(forced.body.data.a, '9');
    assert.deepEqual(forced.body.metadata.managedFields.map((m: any) => [m.manager, Object.keys(m.fieldsV1['f:data'])]), [['alice', ['f:b']], ['bob', ['f:a', 'f:b']]]);
  });

  test('list items merge by their keys: two appliers, one container each', async () => {
    // arrange
    const full = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'two' }, spec: { selector: { matchLabels: { app: 'two' } }, template: { metadata: { labels: { app: 'two' } }, spec: { containers: [{ name: 'a', image: 'a:1' }] } } } });
    const more = JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'two' }, spec: { template: { spec: { containers: [{ name: 'b', image: 'b:1' }] } } } });
    // act
    await call('PATCH', `/apis/apps/v1/namespaces/default/deployments/two?fieldManager=one`, full, APPLY);
    const r = await call('PATCH', `/apis/apps/v1/namespaces/default/deployments/two?fieldManager=two`, more, APPLY);
    // assert
    assert.equal(r.status, 200, r.body.message);
    assert.deepEqual(r.body.spec.template.spec.containers.map((c: any) => c.name), ['a', 'b']);
    const two = r.body.metadata.managedFields.find((m: any) => m.manager === 'two');
    assert.deepEqual(two.fieldsV1, { 'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"b"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } } });
  });

  const refusals = [
    { name: 'a configuration of another version', path: `${CM}/v?fieldManager=m`, body: '{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"v"}}', type: APPLY, status: 400, message: 'invalid object type: /v2, Kind=ConfigMap' },
    { name: 'repeated YAML keys under Strict', path: `${CM}/d?fieldManager=m&fieldValidation=Strict`, body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata:\n  a: "1"\n  a: "2"\n', type: APPLY, status: 400, message: 'error strict decoding patch: error converting YAML to JSON: yaml: unmarshal errors:\n  line 7: key "a" already set in map' },
    { name: 'an undeclared field', path: `${CM}/u?fieldManager=m`, body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u"},"spec":{}}', type: APPLY, status: 500, message: 'failed to create typed patch object (/u; /v1, Kind=ConfigMap): .spec: field not declared in schema' },
    { name: 'force on a merge patch', path: `${CM}/applied?force=true`, body: '{}', type: 'application/merge-patch+json', status: 422, message: 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch' },
  ];
  for (const r of refusals) {
    test(`refused: ${r.name}`, async () => {
      // act
      const a = await call('PATCH', r.path, r.body, r.type);
      // assert
      assert.equal(a.status, r.status);
      assert.equal(a.body.message, r.message);
    });
  }
});
