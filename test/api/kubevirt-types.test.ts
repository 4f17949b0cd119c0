import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import {
  GENERATED_FILE,
  generateKubevirtTypes,
  readSpec,
  type SwaggerSpec,
} from '../../scripts/gen-types.ts';
import type { VirtualMachineInstance } from '../../shared/api/index.ts';
import { NO_REFERENCE, projectRoot, referenceDir } from '../support/reference.ts';
import { schemaProblems } from './schema-check.ts';
import { typecheckSnippet } from './typecheck.ts';

const fixtures = join(projectRoot, 'test/api/fixtures');
const miniSpec = JSON.parse(readFileSync(join(fixtures, 'mini-swagger.json'), 'utf8')) as SwaggerSpec;
const indexTs = join(projectRoot, 'shared/api/index.ts');

/** Kinds in KubeVirt's examples that we generate types for, with their spec definition. */
const KINDS: Readonly<Record<string, string>> = {
  VirtualMachineInstance: 'v1.VirtualMachineInstance',
  VirtualMachine: 'v1.VirtualMachine',
  VirtualMachineInstanceMigration: 'v1.VirtualMachineInstanceMigration',
  MigrationPolicy: 'v1alpha1.MigrationPolicy',
};

interface Manifest {
  readonly file: string;
  readonly kind: string;
  readonly object: Record<string, unknown>;
}

function readManifests(dir: string, files: readonly string[]): Manifest[] {
  return files.flatMap((file) =>
    parseAllDocuments(readFileSync(join(dir, file), 'utf8'))
      .map((doc) => doc.toJSON() as Record<string, unknown> | null)
      .filter((object): object is Record<string, unknown> => object !== null && typeof object.kind === 'string')
      .map((object) => ({ file, kind: object.kind as string, object })),
  );
}

/** Disks name volumes; an example (or fixture) where they do not line up was misparsed. */
function unmatchedDisks(vmi: VirtualMachineInstance): string[] {
  const volumes = new Set((vmi.spec.volumes ?? []).map((v) => v.name));
  return (vmi.spec.domain.devices.disks ?? []).map((d) => d.name).filter((n) => !volumes.has(n));
}

describe('gen-types mapping rules (project fixture spec)', () => {
  const text = generateKubevirtTypes(miniSpec, ['v1.Widget']);

  test.describe('each rule shows up in the generated text', () => {
    const cases: ReadonlyArray<[rule: string, expected: string]> = [
      ['required field is mandatory', '  spec: WidgetSpec;'],
      ['other fields are optional', '  metadata?: ObjectMeta;'],
      ['quantity is string | number', 'export type Quantity = string | number;'],
      ['int-or-string is string | number', 'export type IntOrString = string | number;'],
      ['string enum becomes a union', '  policy?: "Always" | "Never";'],
      ['map becomes a Record', '  selector?: Record<string, string>;'],
      ['integer array becomes number[]', '  ports?: number[];'],
      ['marker object becomes Record<string, unknown>', 'export type InterfaceBridge = Record<string, unknown>;'],
      ['["string","null"] becomes string | null', '  when?: string | null;'],
      ['v1 keeps the short name on a clash', '  status?: PersistentVolumeClaimVolumeSource;'],
      ['core type gets the Core prefix on a clash', '  claim?: CorePersistentVolumeClaimVolumeSource;'],
      ['non-identifier keys are quoted', '  "x-weird-key"?: boolean;'],
      ['description becomes TSDoc with */ escaped', ' * It spans lines and mentions *\\/* media types.'],
    ];
    for (const [rule, expected] of cases) {
      test(rule, () => {
        assert.ok(text.includes(expected), `expected the generated text to contain ${JSON.stringify(expected)}:\n${text}`);
      });
    }
  });

  test('only definitions reachable from the roots are generated', () => {
    // assert
    assert.doesNotMatch(text, /Unreachable/);
    assert.equal((text.match(/^export (interface|type) /gm) ?? []).length, 8);
  });

  test('the output is deterministic and type-checks under strict TS', () => {
    // act
    const again = generateKubevirtTypes(miniSpec, ['v1.Widget']);
    const diagnostics = typecheckSnippet(`${text}\nexport const w: Widget = { spec: { size: '1Gi', port: 8080, bridge: {} } };\n`);
    // assert
    assert.equal(again, text, 'same spec must give the same bytes');
    assert.deepEqual(diagnostics, []);
  });

  test('a dangling $ref is an error naming the missing definition', () => {
    // arrange
    const broken: SwaggerSpec = { definitions: { 'v1.A': { type: 'object', properties: { b: { $ref: '#/definitions/v1.B' } } } } };
    // act + assert
    assert.throws(() => generateKubevirtTypes(broken, ['v1.A']), /definition v1\.B is referenced but missing/);
  });

  test('npm run gen:types with a missing spec fails with a clear message naming the path', () => {
    // act
    const r = spawnSync(process.execPath, ['scripts/gen-types.ts', '--spec', '/nonexistent/swagger.json'], {
      cwd: projectRoot,
      encoding: 'utf8',
    });
    // assert
    assert.equal(r.status, 1);
    assert.match(r.stderr, /KubeVirt OpenAPI spec not found at \/nonexistent\/swagger\.json; pass --spec PATH/);
  });
});

describe('project VMI fixture', () => {
  const [manifest] = readManifests(fixtures, ['vmi-minimal.yaml']);

  test('parses into a VirtualMachineInstance whose disks match its volumes', () => {
    // arrange
    assert.ok(manifest, 'fixture has one document');
    const vmi = manifest.object as unknown as VirtualMachineInstance;
    // assert
    assert.equal(vmi.spec.domain.devices.interfaces?.[0]?.name, 'default');
    assert.equal(vmi.spec.domain.resources?.requests?.memory, '128Mi');
    assert.deepEqual(unmatchedDisks(vmi), []);
  });

  test('type-checks as a VirtualMachineInstance literal, and a misspelt field does not', () => {
    // arrange
    const literal = JSON.stringify(manifest?.object);
    const misspelt = literal.replace('"terminationGracePeriodSeconds"', '"terminationGracePeriod"');
    const header = `import type { VirtualMachineInstance } from ${JSON.stringify(indexTs)};\n`;
    // act
    const ok = typecheckSnippet(`${header}export const v: VirtualMachineInstance = ${literal};\n`);
    const bad = typecheckSnippet(`${header}export const v: VirtualMachineInstance = ${misspelt};\n`);
    // assert
    assert.deepEqual(ok, []);
    assert.match(bad.join('\n'), /terminationGracePeriod/, 'an unknown field must be rejected');
  });
});

describe('against KubeVirt reference material', () => {
  const ref = referenceDir();
  const skip = ref ? false : NO_REFERENCE;

  test('shared/api/kubevirt.gen.ts is up to date with the spec', { skip }, () => {
    // arrange
    const spec = readSpec(join(ref ?? '', 'api/swagger.json'));
    // act
    const fresh = generateKubevirtTypes(spec);
    // assert
    assert.ok(fresh === readFileSync(GENERATED_FILE, 'utf8'), 'kubevirt.gen.ts is stale: run `npm run gen:types` and commit it');
  });

  test("KubeVirt's examples fit the spec definitions field by field", { skip }, () => {
    // arrange
    const spec = readSpec(join(ref ?? '', 'api/swagger.json'));
    const dir = join(ref ?? '', 'examples');
    const manifests = readManifests(dir, readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort())
      .concat(readManifests(fixtures, ['vmi-minimal.yaml']))
      .filter((m) => m.kind in KINDS);
    // act
    const problems = manifests.flatMap((m) =>
      schemaProblems(spec, { $ref: `#/definitions/${KINDS[m.kind]}` }, m.object).map((p) => `${m.file}: ${p}`),
    );
    // assert
    assert.ok(manifests.filter((m) => m.kind === 'VirtualMachineInstance').length >= 10, 'expected the VMI examples');
    assert.deepEqual(problems, []);
  });

  test("KubeVirt's examples type-check against the generated types, disks matching volumes", { skip }, () => {
    // arrange
    const dir = join(ref ?? '', 'examples');
    const manifests = readManifests(dir, readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()).filter((m) => m.kind in KINDS);
    const typeOfKind: Readonly<Record<string, string>> = { MigrationPolicy: 'MigrationPolicy' };
    const names = [...new Set(manifests.map((m) => typeOfKind[m.kind] ?? m.kind))];
    const body = manifests
      .map((m, i) => `// ${m.file}\nexport const e${i}: ${typeOfKind[m.kind] ?? m.kind} = ${JSON.stringify(m.object)};`)
      .join('\n');
    // act
    const diagnostics = typecheckSnippet(`import type { ${names.join(', ')} } from ${JSON.stringify(indexTs)};\n${body}\n`);
    const vmis = manifests.filter((m) => m.kind === 'VirtualMachineInstance');
    const unmatched = vmis.flatMap((m) => unmatchedDisks(m.object as unknown as VirtualMachineInstance).map((d) => `${m.file}: ${d}`));
    // assert
    assert.deepEqual(diagnostics, []);
    assert.deepEqual(unmatched, []);
  });
});
