/**
 * Where the reconciler's Kubernetes credentials come from. One function, one answer that says
 * which source won, so a person reading the startup log knows which cluster they are talking to.
 *
 * Order (first match wins): an explicit file → `$KUBECONFIG` (colon-separated files merged, the
 * first file's current context wins, as kubectl does) → `~/.kube/config` → in-cluster service
 * account (`KUBERNETES_SERVICE_HOST` + the mounted token).
 *
 * Seam for EKS IAM auth (a later issue): pass `authenticators`; each is registered on the
 * KubeConfig with `addAuthenticator` and is asked, per request, whether it handles the current
 * user (e.g. a user whose `exec` runs `aws eks get-token`, or a synthetic `eks-iam` user built
 * from the Lambda's role). Nothing else in the project needs to change for it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidInputError } from '../errors.ts';

/**
 * client-node's per-user authenticator hook (`KubeConfig.addAuthenticator`); the package does not
 * export the interface by name.
 */
export type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

/** Where the service account token and CA are mounted in a pod. */
export const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Which source the config came from. */
export type KubeConfigSource = 'file' | 'env' | 'home' | 'in-cluster';

export interface LoadKubeConfigOptions {
  /** An explicit kubeconfig file (CLI `--kubeconfig`); wins over everything else. */
  readonly file?: string;
  /** A context to switch to after loading (CLI `--context`). */
  readonly context?: string;
  /** Environment to read `KUBECONFIG`, `KUBERNETES_SERVICE_HOST/PORT` from; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Home directory for `~/.kube/config`; default `os.homedir()`. */
  readonly homeDir?: string;
  /** Service account mount; default {@link IN_CLUSTER_DIR}. */
  readonly inClusterDir?: string;
  /** Extra authenticators (the EKS IAM seam, see the file header). */
  readonly authenticators?: readonly Authenticator[];
}

/** A loaded config and a one-line account of where it came from. */
export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  readonly source: KubeConfigSource;
  /** The file(s) read, or the token path for in-cluster. */
  readonly paths: readonly string[];
  readonly context: string;
  /** The API server URL of the current context's cluster. */
  readonly server: string;
  /** E.g. `kubeconfig /home/me/.kube/config (from ~/.kube/config), context kind, server https://…`. */
  readonly description: string;
}

/** The kubeconfig could not be found or read; `field` is `kubeconfig`, the message names the file. */
export class KubeConfigError extends InvalidInputError {
  constructor(message: string) {
    super('kubeconfig', message, 'InvalidKubeConfig');
  }
}

function readInto(kc: KubeConfig, path: string, origin: string): void {
  if (!existsSync(path)) throw new KubeConfigError(`${path} (${origin}) does not exist`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KubeConfigError(`cannot read ${path} (${origin}): ${(err as Error).message}`);
  }
  try {
    kc.loadFromString(text);
    // Relative certificate/key paths in a kubeconfig are relative to the file, as kubectl reads them.
    kc.makePathsAbsolute(join(path, '..'));
  } catch (err) {
    throw new KubeConfigError(`${path} (${origin}) is not a valid kubeconfig: ${(err as Error).message}`);
  }
}

function loadFiles(paths: readonly string[], origin: string): KubeConfig {
  const [first, ...rest] = paths;
  if (first === undefined) throw new KubeConfigError(`${origin} names no file`);
  const kc = new KubeConfig();
  readInto(kc, first, origin);
  for (const path of rest) {
    const more = new KubeConfig();
    readInto(more, path, origin);
    kc.mergeConfig(more, true);
  }
  return kc;
}

/** Loads a KubeConfig from the first source that exists (see the file header). */
export function loadKubeConfig(options: LoadKubeConfigOptions = {}): LoadedKubeConfig {
  const env = options.env ?? process.env;
  let kc: KubeConfig;
  let source: KubeConfigSource;
  let paths: string[];
  let origin: string;
  const home = join(options.homeDir ?? homedir(), '.kube', 'config');
  const inClusterDir = options.inClusterDir ?? IN_CLUSTER_DIR;
  if (options.file) {
    [source, paths, origin] = ['file', [options.file], '--kubeconfig'];
    kc = loadFiles(paths, origin);
  } else if (env.KUBECONFIG) {
    [source, paths, origin] = ['env', env.KUBECONFIG.split(delimiter).filter(Boolean), '$KUBECONFIG'];
    kc = loadFiles(paths, origin);
  } else if (existsSync(home)) {
    [source, paths, origin] = ['home', [home], '~/.kube/config'];
    kc = loadFiles(paths, origin);
  } else if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) {
    const token = join(inClusterDir, 'token');
    if (!existsSync(token)) {
      throw new KubeConfigError(`KUBERNETES_SERVICE_HOST is set but the service account token ${token} is missing`);
    }
    [source, paths, origin] = ['in-cluster', [token], 'in-cluster service account'];
    kc = inClusterConfig(env, inClusterDir);
  } else {
    throw new KubeConfigError(
      `no kubeconfig: none given, $KUBECONFIG unset, ${home} missing, and not running in a cluster (KUBERNETES_SERVICE_HOST unset)`,
    );
  }
  if (options.context) {
    if (!kc.getContextObject(options.context)) {
      throw new KubeConfigError(`context "${options.context}" not found in ${paths.join(', ')}`);
    }
    kc.setCurrentContext(options.context);
  }
  for (const authenticator of options.authenticators ?? []) kc.addAuthenticator(authenticator);
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new KubeConfigError(`current context "${kc.getCurrentContext()}" in ${paths.join(', ')} names no cluster server`);
  const context = kc.getCurrentContext();
  const what = source === 'in-cluster' ? `in-cluster service account ${paths[0]}` : `kubeconfig ${paths.join(', ')} (from ${origin})`;
  return { kubeConfig: kc, source, paths, context, server, description: `${what}, context ${context}, server ${server}` };
}

/**
 * Like client-node's `loadFromCluster`, but from the given environment and mount directory, so
 * a test can exercise it outside a pod.
 */
function inClusterConfig(env: Readonly<Record<string, string | undefined>>, dir: string): KubeConfig {
  const kc = new KubeConfig();
  const host = env.KUBERNETES_SERVICE_HOST ?? '';
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  kc.loadFromClusterAndUser(
    { name: 'inCluster', server: `https://${hostPart}:${port}`, caFile: join(dir, 'ca.crt'), skipTLSVerify: false },
    { name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: join(dir, 'token') } } },
  );
  return kc;
}
