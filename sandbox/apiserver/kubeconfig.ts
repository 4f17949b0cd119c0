/**
 * Kubeconfigs for the sandbox: plain HTTP with `skipTLSVerify` (client-node refuses http://
 * otherwise) and the identity as the bearer token, which the server counts requests by.
 */
import { writeFile } from 'node:fs/promises';
import { KubeConfig } from '@kubernetes/client-node';

/** A client-node KubeConfig for `url`, authenticating as `identity`. */
export function sandboxKubeConfig(url: string, identity = 'admin', namespace = 'default'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'sandbox', server: url, skipTLSVerify: true }],
    users: [{ name: identity, token: identity }],
    contexts: [{ name: 'sandbox', cluster: 'sandbox', user: identity, namespace }],
    currentContext: 'sandbox',
  });
  return kc;
}

/** Writes the kubeconfig to `path` (JSON, which is valid YAML); returns the path. */
export async function writeSandboxKubeconfig(path: string, url: string, identity = 'admin'): Promise<string> {
  await writeFile(path, sandboxKubeConfig(url, identity).exportConfig() + '\n', { mode: 0o600 });
  return path;
}
