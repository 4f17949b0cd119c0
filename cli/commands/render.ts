/**
 * `virt-reconciler render launcher-pod|target-pod|attachment-pod -f vmi.yaml [--kubevirt kv.yaml] [--objects objs.yaml] [-o yaml|json]`
 *
 * Reads a VMI (or a VM, whose `spec.template` becomes the VMI) from a possibly multi-document
 * YAML file, applies the mutating webhook's defaults (a real cluster's webhook would have), and
 * prints the pod the template service renders. `--objects` gives it the cluster objects KubeVirt's
 * template service reads (PVCs, the Namespace, ResourceQuotas, the KubeVirt CR): without them
 * every claim is a Filesystem RWO one and no automatic limits apply. Bad input is a one-line
 * error naming the file and the field, exit code 2.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments, stringify } from 'yaml';
import type { V1Pod } from '@kubernetes/client-node';
import type { KubeVirt, VirtualMachineInstance, VirtualMachineInstanceMigration } from '../../shared/api/index.ts';
import { InvalidInputError, ReconcilerError } from '../../shared/errors.ts';
import {
  applyVmiDefaults, clusterConfigFromKubeVirt, PvcNotFoundError, vmiFromManifest, renderAttachmentPod, renderLauncherPod, renderTargetPod, withStandInIdentity,
} from '../../shared/template/index.ts';
import { renderFactsFromObjects } from '../../shared/template/cluster-facts.ts';
import { hotplugVolumeNames } from '../../shared/template/render-volumes.ts';
import { CliError, parseFlags, type Command } from '../command.ts';

const KINDS = ['launcher-pod', 'target-pod', 'attachment-pod'] as const;
type PodKind = (typeof KINDS)[number];

const HELP = `usage: virt-reconciler render <${KINDS.join('|')}> -f <vmi-or-vm.yaml> [flags]

flags:
  -f, --file <path>        VMI or VM manifest (multi-document YAML is fine; the first VMI/VM is used)
      --kubevirt <path>    KubeVirt CR for the cluster configuration (defaults when omitted)
      --objects <path>     cluster objects the renderer reads: PVCs (a DataVolume as the PVC it
                           becomes; the backend-storage claim of a persistent TPM/EFI), the
                           Namespace, ResourceQuotas, a KubeVirt CR (when --kubevirt is not given)
  -o, --output <yaml|json> output format (default yaml)
  -n, --namespace <ns>     namespace when the manifest has none (default "default")
      --migration <path>   target-pod: the VirtualMachineInstanceMigration (a stand-in when omitted)
      --node <name>        attachment-pod: the launcher pod's node (default "node01")
      --launcher-image <i> override the launcher image`;

type Doc = Record<string, unknown>;

function readDocs(path: string): Doc[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`${path}: cannot read file (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  const docs = parseAllDocuments(text);
  const out: Doc[] = [];
  for (const d of Array.isArray(docs) ? docs : [docs]) {
    if (d.errors.length > 0) {
      const e = d.errors[0];
      throw new CliError(`${path}: invalid YAML: ${(e?.message ?? 'parse error').split('\n')[0]}`);
    }
    const js: unknown = d.toJS();
    if (js !== null && typeof js === 'object' && !Array.isArray(js)) out.push(js as Doc);
  }
  return out;
}

function pick(path: string, docs: Doc[], kinds: string[]): Doc {
  const doc = docs.find((d) => kinds.includes(String(d['kind'])));
  if (!doc) throw new CliError(`${path}: no ${kinds.join(' or ')} found in ${docs.length} document(s)`);
  return doc;
}

function render(kind: PodKind, vmi: VirtualMachineInstance, kv: KubeVirt | undefined, flags: { launcherImage?: string | undefined; migration?: Doc | undefined; node: string; objects?: Doc[] | undefined }): V1Pod {
  const config = clusterConfigFromKubeVirt(kv, flags.launcherImage ? { launcherImage: flags.launcherImage } : {});
  const defaulted = applyVmiDefaults(vmi, config);
  const facts = flags.objects ? renderFactsFromObjects(flags.objects, defaulted, config) : {};
  if (kind === 'launcher-pod') return renderLauncherPod(defaulted, config, facts);
  if (kind === 'target-pod') {
    const name = defaulted.metadata?.name ?? 'vmi';
    const migration = (flags.migration ?? {
      metadata: { name: `${name}-migration`, namespace: defaulted.metadata?.namespace, uid: '00000000-0000-4000-8000-000000000001' },
      spec: { vmiName: name },
    }) as unknown as VirtualMachineInstanceMigration;
    const status = (defaulted.status ??= {});
    status.selinuxContext ??= 'none';
    return renderTargetPod(defaulted, migration, undefined, config, facts);
  }
  const launcher = renderLauncherPod(defaulted, config, facts);
  launcher.metadata = { ...launcher.metadata, name: `${launcher.metadata?.generateName ?? 'virt-launcher-'}abcde`, uid: '00000000-0000-4000-8000-000000000002' };
  launcher.spec = { ...(launcher.spec as NonNullable<V1Pod['spec']>), nodeName: flags.node };
  const hot = hotplugVolumeNames(defaulted);
  const volumes = (defaulted.spec.volumes ?? [])
    .filter((v) => hot.has(v.name) && (v.persistentVolumeClaim || v.dataVolume))
    .map((v) => ({ name: v.name, claimName: v.persistentVolumeClaim?.claimName ?? v.dataVolume?.name ?? '' }));
  const withContext = { ...defaulted, status: { ...(defaulted.status ?? {}), selinuxContext: defaulted.status?.selinuxContext ?? 'none' } };
  return renderAttachmentPod(volumes, launcher, withContext, config);
}

export const command: Command = {
  async run(argv: string[]): Promise<number> {
    const { values, positionals } = parseFlags(argv, {
      file: { type: 'string', short: 'f' },
      kubevirt: { type: 'string' },
      objects: { type: 'string' },
      output: { type: 'string', short: 'o', default: 'yaml' },
      namespace: { type: 'string', short: 'n' },
      migration: { type: 'string' },
      node: { type: 'string', default: 'node01' },
      'launcher-image': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    }, true);
    if (values.help) {
      process.stdout.write(HELP + '\n');
      return 0;
    }
    const kind = positionals[0] as PodKind | undefined;
    if (!kind || !KINDS.includes(kind)) throw new CliError(`expected one of ${KINDS.join(', ')}${kind ? `, got '${kind}'` : ''} (see --help)`);
    if (positionals.length > 1) throw new CliError(`unexpected argument '${positionals[1]}'`);
    if (!values.file) throw new CliError('-f/--file is required');
    if (values.output !== 'yaml' && values.output !== 'json') throw new CliError(`--output takes yaml or json, got '${values.output}'`);

    const file = values.file;
    const manifest = pick(file, readDocs(file), ['VirtualMachineInstance', 'VirtualMachine']);
    const objects = values.objects ? readDocs(values.objects) : undefined;
    const kv = values.kubevirt
      ? (pick(values.kubevirt, readDocs(values.kubevirt), ['KubeVirt']) as unknown as KubeVirt)
      : (objects?.find((d) => d['kind'] === 'KubeVirt') as unknown as KubeVirt | undefined);
    const migration = values.migration ? pick(values.migration, readDocs(values.migration), ['VirtualMachineInstanceMigration']) : undefined;
    let pod: V1Pod;
    const notes: string[] = [];
    try {
      const converted = vmiFromManifest(manifest);
      notes.push(...converted.notes);
      const vmi = converted.vmi;
      const identified = withStandInIdentity(vmi, values.namespace ? { namespace: values.namespace } : {});
      pod = render(kind, identified, kv, { launcherImage: values['launcher-image'], migration, node: values.node ?? 'node01', objects });
    } catch (err) {
      // Config errors name KubeVirt CR fields; everything else is about the VMI file.
      if (err instanceof InvalidInputError) {
        const where = err.field.startsWith('spec.configuration') && values.kubevirt ? values.kubevirt : file;
        throw new CliError(`${where}: ${err.message}`);
      }
      // A claim the VMI uses that --objects lacks: name the objects file, as KubeVirt names the claim.
      if (err instanceof PvcNotFoundError && values.objects) throw new CliError(`${values.objects}: ${err.message}`);
      if (err instanceof ReconcilerError) throw new CliError(`${file}: ${err.message}`);
      if (err instanceof TypeError) throw new CliError(`${file}: malformed manifest (${err.message})`);
      throw err;
    }
    for (const n of notes) process.stderr.write(`virt-reconciler render: note: ${n}\n`);
    process.stdout.write(values.output === 'json' ? JSON.stringify(pod, null, 2) + '\n' : stringify(pod));
    return 0;
  },
};
