/**
 * The sandbox's virt-api, for the subresources the storage controllers call
 * (`/apis/subresources.kubevirt.io/v1/namespaces/<ns>/…`):
 * - `virtualmachineinstances/<name>/freeze|unfreeze` → the guest agent (nodes/guest-agent.ts),
 *   with virt-handler's thaw after `unfreezeTimeout`;
 * - `virtualmachineinstances/<name>/backup|redefine-checkpoint` → the backup agent;
 * - `virtualmachineinstances/<name>/pause|unpause` → the `Paused` condition virt-handler writes
 *   ({@link pauseAnswer});
 * - `virtualmachines/<name>/stop` → {@link stopAction}.
 * Every effect is a write through the Kubernetes API (client-node), so the server works beside
 * the emulator and beside a real control plane. It listens on its own port: controllers reach it
 * through their subresource base URL (in a real cluster that is the API server, which aggregates
 * virt-api).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JSON_PATCH, KUBEVIRT, MERGE_PATCH, isNotFound, statusCodeOf, type NodeSideApi } from '../nodes/api.ts';
import { freezeAnswer, unfreezeAnswer, type AgentAnswer } from '../nodes/guest-agent.ts';
import type { Vmi } from '../nodes/objects.ts';
import type { Clock, ClockTimer } from '../clock.ts';
import type { BackupAgent } from '../storage/backup-agent.ts';
import type { BackupRequest } from '../storage/backup-steps.ts';
import { stopAction, type StopTarget } from './vm-stop.ts';
import { pauseAnswer } from './vmi-pause.ts';

const VMIS = { ...KUBEVIRT, plural: 'virtualmachineinstances' } as const;
const VMS = { ...KUBEVIRT, plural: 'virtualmachines' } as const;
const ROUTE = /^\/apis\/subresources\.kubevirt\.io\/v1\/namespaces\/([^/]+)\/(virtualmachineinstances|virtualmachines)\/([^/]+)\/([a-z-]+)$/;

export interface VirtApiOptions {
  api: NodeSideApi;
  clock: Clock;
  backup: BackupAgent;
  onError?: (what: string, err: unknown) => void;
}

/** A running sandbox virt-api. */
export interface VirtApi {
  /** `http://127.0.0.1:<port>`: the base URL of the subresource API. */
  url: string;
  /** Test hook: freeze of this VMI fails with `message` (e.g. "Guest agent is not responding"). */
  failFreeze(namespace: string, name: string, message: string | undefined): void;
  /** Test hook: unfreeze fails with `message` (e.g. Windows VSS: "fsfreeze is limited …"). */
  failUnfreeze(namespace: string, name: string, message: string | undefined): void;
  /** Every call served, in order (`PUT ns/name/verb`), for tests. */
  calls(): string[];
  stop(): Promise<void>;
}

function status(code: number, message: string) {
  const reason = code === 404 ? 'NotFound' : code === 409 ? 'Conflict' : code === 422 ? 'Invalid' : code === 400 ? 'BadRequest' : 'InternalError';
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  const parsed: unknown = JSON.parse(text);
  return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
}

/** `"5m0s"`, `"30s"`, `"1h2m3s"`, `"0s"` → ms (a Go duration as KubeVirt serialises it). */
export function goDurationMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const re = /(\d+(?:\.\d+)?)(h|ms|m|s)/g;
  let total = 0;
  let matched = '';
  for (const m of value.matchAll(re)) {
    matched += m[0];
    total += Number(m[1]) * (m[2] === 'h' ? 3_600_000 : m[2] === 'm' ? 60_000 : m[2] === 's' ? 1000 : 1);
  }
  return matched === value && value !== '' ? total : undefined;
}

export async function startVirtApi(opts: VirtApiOptions): Promise<VirtApi> {
  const { api, clock, backup } = opts;
  const freezeFailures = new Map<string, string>();
  const unfreezeFailures = new Map<string, string>();
  const thawTimers = new Map<string, ClockTimer>();
  const served: string[] = [];

  const getVmi = async (namespace: string, name: string): Promise<Vmi | undefined> => {
    try {
      return (await api.custom.getNamespacedCustomObject({ ...VMIS, namespace, name })) as Vmi;
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  const getVm = async (namespace: string, name: string): Promise<{ status?: { snapshotInProgress?: string | null } } | undefined> => {
    try {
      return (await api.custom.getNamespacedCustomObject({ ...VMS, namespace, name })) as { status?: { snapshotInProgress?: string | null } };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };

  const applyAgent = async (vmi: Vmi | undefined, answer: AgentAnswer): Promise<{ code: number; message?: string }> => {
    if ('code' in answer) return answer;
    const { namespace = '', name = '', resourceVersion } = vmi?.metadata ?? {};
    await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace, name, body: { metadata: { resourceVersion }, status: answer.status } }, MERGE_PATCH);
    return { code: 200 };
  };

  const thaw = async (namespace: string, name: string) => {
    const vmi = await getVmi(namespace, name);
    if (vmi?.status?.fsFreezeStatus !== 'frozen') return;
    await applyAgent(vmi, unfreezeAnswer(vmi, undefined));
  };

  const vmiVerb = async (namespace: string, name: string, verb: string, body: Record<string, unknown>) => {
    const key = `${namespace}/${name}`;
    switch (verb) {
      case 'freeze': {
        const vmi = await getVmi(namespace, name);
        const done = await applyAgent(vmi, freezeAnswer(vmi, freezeFailures.get(key)));
        // virt-handler thaws a guest left frozen once unfreezeTimeout passes (0 = never).
        const timeoutMs = goDurationMs(body.unfreezeTimeout);
        clock.clearTimeout(thawTimers.get(key));
        if (done.code === 200 && timeoutMs) {
          thawTimers.set(key, clock.setTimeout(() => {
            thawTimers.delete(key);
            thaw(namespace, name).catch((e: unknown) => opts.onError?.(`virt-api thaw ${key}`, e));
          }, timeoutMs));
        }
        return done;
      }
      case 'unfreeze': {
        clock.clearTimeout(thawTimers.get(key));
        thawTimers.delete(key);
        const vmi = await getVmi(namespace, name);
        return applyAgent(vmi, unfreezeAnswer(vmi, unfreezeFailures.get(key)));
      }
      case 'backup': {
        if (typeof body.backupName !== 'string' || typeof body.cmd !== 'string') return { code: 400, message: 'backupName and cmd are required' };
        return backup.command(namespace, name, body as unknown as BackupRequest);
      }
      case 'pause':
      case 'unpause': {
        const vmi = await getVmi(namespace, name);
        const vm = verb === 'unpause' ? await getVm(namespace, name) : undefined;
        const answer = pauseAnswer(verb, vmi, name, clock.isoNow(), vm?.status?.snapshotInProgress != null);
        if ('code' in answer) return answer;
        await api.custom.patchNamespacedCustomObject({ ...VMIS, namespace, name, body: answer.ops }, JSON_PATCH);
        return { code: 200 };
      }
      case 'redefine-checkpoint':
        if (!(await getVmi(namespace, name))) return { code: 404, message: `virtualmachineinstance ${key} not found` };
        return backup.redefineCheckpoint(namespace, name);
      default:
        return { code: 404, message: `unknown subresource ${verb}` };
    }
  };

  const vmVerb = async (namespace: string, name: string, verb: string) => {
    if (verb !== 'stop') return { code: 404, message: `unknown subresource ${verb}` };
    let vm: StopTarget;
    try {
      vm = (await api.custom.getNamespacedCustomObject({ ...VMS, namespace, name })) as StopTarget;
    } catch (err) {
      if (isNotFound(err)) return { code: 404, message: `virtualmachine ${namespace}/${name} not found` };
      throw err;
    }
    const vmi = await getVmi(namespace, name);
    const action = stopAction(vm, vmi?.metadata?.uid);
    if (action.kind === 'refuse') return action;
    if (action.kind === 'spec') {
      await api.custom.patchNamespacedCustomObject({ ...VMS, namespace, name, body: { spec: action.patch } }, MERGE_PATCH);
    } else {
      const rv = vm.metadata?.resourceVersion;
      const ops = vm.status?.stateChangeRequests?.length
        ? [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'replace', path: '/status/stateChangeRequests', value: action.stateChangeRequests }]
        : [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, { op: 'add', path: '/status/stateChangeRequests', value: action.stateChangeRequests }];
      await api.custom.patchNamespacedCustomObjectStatus({ ...VMS, namespace, name, body: ops }, JSON_PATCH);
    }
    return { code: 202 };
  };

  const handler = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const m = ROUTE.exec(path);
    const reply = (code: number, message?: string) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(code < 300 ? '' : JSON.stringify(status(code, message ?? '')));
    };
    if (!m || req.method !== 'PUT') return reply(404, 'the server could not find the requested resource');
    const [, namespace = '', resource, name = '', verb = ''] = m;
    served.push(`PUT ${namespace}/${name}/${verb}`);
    try {
      const body = await bodyOf(req);
      const out = resource === 'virtualmachines' ? await vmVerb(namespace, name, verb) : await vmiVerb(namespace, name, verb, body);
      reply(out.code, out.message);
    } catch (err) {
      opts.onError?.(`virt-api ${path}`, err);
      reply(statusCodeOf(err) ?? 500, err instanceof Error ? err.message : String(err));
    }
  };

  const server = createServer((req, res) => void handler(req, res));
  server.keepAliveTimeout = 500;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const setOrClear = (m: Map<string, string>, key: string, v: string | undefined) => (v === undefined ? m.delete(key) : m.set(key, v));
  return {
    url,
    failFreeze: (namespace, name, message) => void setOrClear(freezeFailures, `${namespace}/${name}`, message),
    failUnfreeze: (namespace, name, message) => void setOrClear(unfreezeFailures, `${namespace}/${name}`, message),
    calls: () => [...served],
    async stop() {
      for (const t of thawTimers.values()) clock.clearTimeout(t);
      thawTimers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
