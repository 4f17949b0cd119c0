/** Applies the manifests of a folder (multi-document YAML) to a cluster, as `kubectl create` would. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { InvalidInputError } from '../shared/errors.ts';

/** Reads every `*.yaml` in `dir`; a broken file fails with its name and the YAML error. */
export function readManifests(dir: string): { file: string; object: KubernetesObject }[] {
  const out: { file: string; object: KubernetesObject }[] = [];
  for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort()) {
    const path = join(dir, file);
    for (const doc of parseAllDocuments(readFileSync(path, 'utf8'))) {
      if (doc.errors.length > 0) throw new InvalidInputError(path, doc.errors[0]!.message.split('\n')[0] ?? 'invalid YAML');
      let object: KubernetesObject | null;
      try {
        object = doc.toJS() as KubernetesObject | null;
      } catch (err) {
        // Parsing succeeded but building the value did not (e.g. an alias to an unknown anchor).
        throw new InvalidInputError(path, err instanceof Error ? err.message.split('\n')[0]! : 'invalid YAML');
      }
      if (!object) continue;
      if (!object.apiVersion || !object.kind || !object.metadata?.name) throw new InvalidInputError(path, 'every document needs apiVersion, kind and metadata.name');
      out.push({ file: path, object });
    }
  }
  return out;
}

/** Creates each object; ones that already exist are left as they are. Returns what was created. */
export async function applyManifests(kc: KubeConfig, manifests: readonly { object: KubernetesObject }[]): Promise<KubernetesObject[]> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const created: KubernetesObject[] = [];
  for (const { object } of manifests) {
    const body = { ...object, metadata: { namespace: 'default', ...object.metadata } };
    try {
      created.push(await api.create(body));
    } catch (err) {
      if ((err as { code?: number }).code === 409) continue;
      throw err;
    }
  }
  return created;
}
