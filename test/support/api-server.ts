/**
 * One emulator API server for the calling test file (started before its tests, closed after) and
 * the test's own client (identity `test`): read `ctx.server` / `ctx.kube` inside tests.
 */
import { after, before } from 'node:test';
import { startApiServer, type ApiServer } from '../../sandbox/apiserver/index.ts';
import { createKubeClient } from '../../shared/kube/client-node.ts';
import type { KubeClient } from '../../shared/kube/client.ts';

export function apiServerPerFile(): { readonly server: ApiServer; readonly kube: KubeClient } {
  let server: ApiServer | undefined;
  let kube: KubeClient | undefined;
  before(async () => {
    server = await startApiServer({ port: 0 });
    kube = createKubeClient(server.kubeConfig('test'));
  });
  after(async () => {
    await server?.close();
  });
  return {
    get server() {
      return server!;
    },
    get kube() {
      return kube!;
    },
  };
}
