/**
 * Field validation as the real server does it (k8s.io/apiserver's strict decoding, the CRD
 * pruner): the same bodies and expected texts as upstream's integration test
 * (test/integration/apiserver/field_validation_test.go), a Deployment for the built-in path and
 * a VirtualMachineInstance for the custom-resource path, sent raw over HTTP (client-node would
 * hide the Warning headers); on both lanes (VR_CONTROL_PLANE=real runs them against kube-apiserver).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiFetch, startSandbox, type RawResponse, type Sandbox } from './support.ts';

const DEPLOYMENT = (name: string): string => `{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "dupename", "name": "${name}", "labels": {"app": "nginx"}, "unknownMeta": "metaVal"},
  "spec": {
    "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2", "paused": true, "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{
      "name": "nginx", "image": "nginx:latest", "unknownNested": "val1", "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}
  }
}`;
const DEPLOYMENT_PROBLEMS = ['duplicate field "metadata.name"', 'unknown field "metadata.unknownMeta"', 'unknown field "spec.unknown1"', 'unknown field "spec.unknownDupe"', 'duplicate field "spec.paused"', 'unknown field "spec.template.spec.containers[0].unknownNested"', 'duplicate field "spec.template.spec.containers[0].imagePullPolicy"'];

const VMI = (name: string): string => `{
  "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
  "metadata": {"name": "dupename", "name": "${name}", "unknownMeta": "metaVal"},
  "spec": {
    "unknown1": "val1", "terminationGracePeriodSeconds": 1, "terminationGracePeriodSeconds": 2,
    "domain": {"devices": {}, "clock": {"utc": {}, "keptByPreserveUnknown": true}, "cpu": {"cores": 1, "unknownNested": 1}}
  }
}`;
const VMI_PROBLEMS = ['duplicate field "metadata.name"', 'duplicate field "spec.terminationGracePeriodSeconds"', 'unknown field "metadata.unknownMeta"', 'unknown field "spec.domain.cpu.unknownNested"', 'unknown field "spec.unknown1"'];

interface Answer {
  status: number;
  body: { message?: string; reason?: string; metadata?: Record<string, unknown>; spec?: Record<string, unknown> } & Record<string, unknown>;
  warnings: string[];
}

/** `299 - "text"` header values, decoded (fetch joins repeated headers with ", "). */
function warningsOf(res: RawResponse): string[] {
  const raw = res.headers.get('warning') ?? '';
  return [...raw.matchAll(/299 - ("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);
}

describe('field validation: Strict, Warn, Ignore; unknown and duplicate fields; pruning', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await startSandbox();
  });
  after(() => sb.server.close());

  async function call(method: string, path: string, body: string, contentType = 'application/json'): Promise<Answer> {
    const res = await apiFetch(sb, path, { method, body, headers: { 'Content-Type': contentType } });
    return { status: res.status, body: (await res.json()) as Answer['body'], warnings: warningsOf(res) };
  }

  const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
  const VMIS = '/apis/kubevirt.io/v1/namespaces/default/virtualmachineinstances';
  const cases = [
    { kind: 'Deployment', base: DEPLOYMENTS, body: DEPLOYMENT, problems: DEPLOYMENT_PROBLEMS, prefix: 'Deployment in version "v1" cannot be handled as a Deployment: ' },
    { kind: 'VirtualMachineInstance', base: VMIS, body: VMI, problems: VMI_PROBLEMS, prefix: 'VirtualMachineInstance in version "v1" cannot be handled as a VirtualMachineInstance: ' },
  ];

  for (const c of cases) {
    test(`${c.kind} create: Strict is a 400 listing every problem in upstream's order`, async () => {
      // act
      const r = await call('POST', `${c.base}?fieldValidation=Strict`, c.body(`strict-${c.kind.toLowerCase()}`));
      // assert
      assert.equal(r.status, 400);
      assert.equal(r.body.reason, 'BadRequest');
      assert.equal(r.body.message, `${c.prefix}strict decoding error: ${c.problems.join(', ')}`);
    });

    for (const directive of ['Warn', undefined]) {
      test(`${c.kind} create: ${directive ?? 'no directive (the server default, Warn)'} creates the pruned object and warns once per problem`, async () => {
        // act
        const name = `warn-${directive ?? 'default'}-${c.kind}`.toLowerCase();
        const r = await call('POST', directive ? `${c.base}?fieldValidation=${directive}` : c.base, c.body(name));
        // assert
        assert.equal(r.status, 201, JSON.stringify(r.body));
        assert.deepEqual(r.warnings, c.problems);
        assert.equal(r.body.metadata?.name, name, 'the last of two equal keys wins');
        assert.equal(r.body.metadata?.unknownMeta, undefined);
        assert.equal(r.body.spec?.unknown1, undefined);
      });
    }

    test(`${c.kind} create: Ignore creates the pruned object without a word`, async () => {
      // act
      const r = await call('POST', `${c.base}?fieldValidation=Ignore`, c.body(`ignore-${c.kind.toLowerCase()}`));
      // assert
      assert.equal(r.status, 201);
      assert.deepEqual(r.warnings, []);
      assert.equal(r.body.spec?.unknown1, undefined);
    });
  }

  test('x-kubernetes-preserve-unknown-fields keeps its subtree; declared fields inside are still checked', async () => {
    // act
    const got = (await (await apiFetch(sb, `${VMIS}/warn-warn-virtualmachineinstance`)).json()) as { spec: { domain: { clock: Record<string, unknown>; cpu: Record<string, unknown> } } };
    // assert
    assert.deepEqual(got.spec.domain.clock, { utc: {}, keptByPreserveUnknown: true });
    assert.deepEqual(got.spec.domain.cpu, { cores: 1 });
  });

  test('merge patch: repeats in the patch first, then the unknown fields of the patched object (sorted); Strict names the patch as invalid (422)', async () => {
    // arrange
    const path = `${VMIS}/warn-warn-virtualmachineinstance`;
    const patch = '{"spec":{"zzz":1,"domain":{"cpu":{"sockets":1,"sockets":2,"bogus":true}},"aaa":2}}';
    // act
    const strict = await call('PATCH', `${path}?fieldValidation=Strict`, patch, 'application/merge-patch+json');
    const warn = await call('PATCH', `${path}?fieldValidation=Warn`, patch, 'application/merge-patch+json');
    // assert
    const problems = 'strict decoding error: duplicate field "spec.domain.cpu.sockets", unknown field "spec.aaa", unknown field "spec.domain.cpu.bogus", unknown field "spec.zzz"';
    assert.equal(strict.status, 422);
    assert.match(strict.body.message!, /^ "" is invalid: patch: Invalid value: "\{\\"apiVersion\\":\\"kubevirt.io\/v1\\",/, 'the value is the patched object');
    assert.ok(strict.body.message!.endsWith(`: ${problems}`), strict.body.message);
    assert.equal((strict.body.details as { causes: Array<{ field: string }> }).causes[0]!.field, 'patch');
    assert.equal(warn.status, 200);
    assert.deepEqual(warn.warnings, ['duplicate field "spec.domain.cpu.sockets"', 'unknown field "spec.aaa"', 'unknown field "spec.domain.cpu.bogus"', 'unknown field "spec.zzz"']);
    assert.deepEqual((warn.body.spec as { domain: { cpu: unknown } }).domain.cpu, { cores: 1, sockets: 2 });
  });

  test('a merge patch whose only problem is a repeated key is still an invalid patch (422)', async () => {
    // act
    const r = await call('PATCH', `${VMIS}/warn-warn-virtualmachineinstance?fieldValidation=Strict`, '{"metadata":{"labels":{"a":"1","a":"2"}}}', 'application/merge-patch+json');
    // assert
    assert.equal(r.status, 422);
    assert.ok(r.body.message!.endsWith(': strict decoding error: duplicate field "metadata.labels.a"'), r.body.message);
  });

  test('JSON patch: unknown and repeated keys of the operations are named with their index', async () => {
    // arrange
    const patch = '[{"op":"add","path":"/spec/unknown1","value":"v","foo":"bar"},{"op":"add","path":"/spec/unknown2","path":"/spec/unknown3","value":"v"}]';
    // act
    const r = await call('PATCH', `${VMIS}/warn-warn-virtualmachineinstance?fieldValidation=Strict`, patch, 'application/json-patch+json');
    // assert
    assert.equal(r.status, 422);
    assert.ok(r.body.message!.endsWith(': strict decoding error: json patch unknown field "[0].foo", json patch duplicate field "[1].path", unknown field "spec.unknown1", unknown field "spec.unknown3"'), r.body.message);
  });

  test('strategic merge patch (built-in): the invalid value is the patch as Go prints a map', async () => {
    // arrange
    await call('POST', '/api/v1/namespaces/default/configmaps', '{"metadata":{"name":"smp"},"data":{"a":"1"}}');
    // act
    const r = await call('PATCH', '/api/v1/namespaces/default/configmaps/smp?fieldValidation=Strict', '{"data":{"b":"2"},"zzz":1}', 'application/strategic-merge-patch+json');
    // assert
    assert.equal(r.status, 422);
    assert.equal(r.body.message, ' "" is invalid: patch: Invalid value: "map[data:map[b:2] zzz:1]": strict decoding error: unknown field "zzz"');
  });

  test('an unsupported fieldValidation value is a 422 on the options kind', async () => {
    // act
    const r = await call('POST', `${DEPLOYMENTS}?fieldValidation=Loud`, DEPLOYMENT('loud'));
    // assert
    assert.equal(r.status, 422);
    assert.equal(r.body.message, 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loud": supported values: "", "Ignore", "Strict", "Warn"');
  });
});
