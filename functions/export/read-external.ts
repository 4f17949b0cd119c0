/**
 * Where the export proxy is published outside the cluster (KubeVirt's getExternalLinkHostAndCert):
 * the first Ingress in KubeVirt's namespace to `virt-exportproxy` (its host, the certificate its
 * TLS secret offers for it); without one, virt-operator's Route to it (OpenShift: its admitted
 * host, the certificate `kube-root-ca.crt` offers for it). The decisions are external-link.ts's;
 * this file does the reads.
 *
 * KubeVirt reads Routes only on OpenShift (found by discovery at start). A function has no start,
 * so the list itself asks: an API server that does not serve `route.openshift.io` answers 404,
 * which is read as "no Routes" — as is a 404 for Ingresses.
 */
import { CONFIG_MAPS, INGRESSES, ROUTES, SECRETS } from '../../shared/api/resources.ts';
import { NotFoundError } from '../../shared/kube/errors.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { externalIngress, externalRoute, ingressCert, routeCert, ROUTE_CA_CONFIG_MAP, type IngressLike, type RouteLike } from './external-link.ts';

/** The external host and its certificate. */
export interface ExternalHost {
  readonly host: string;
  readonly cert: string;
}

/** The items of a list, or none when the API server does not serve the resource (404). */
async function listServed<T>(read: () => Promise<{ items: T[] }>): Promise<T[]> {
  try {
    return (await read()).items;
  } catch (err) {
    if (err instanceof NotFoundError) return [];
    throw err;
  }
}

/** The external host of the export proxy in KubeVirt's `namespace`, or undefined. */
export async function readExternal(kube: Pick<KubeClient, 'get' | 'list'>, namespace: string, now: number): Promise<ExternalHost | undefined> {
  const ingresses = await listServed(() => kube.list(INGRESSES, namespace));
  const ing = externalIngress(ingresses as IngressLike[]);
  if (ing) {
    const secret = ing.secretName ? await kube.get(SECRETS, namespace, ing.secretName) : undefined;
    return { host: ing.host, cert: ingressCert(ing.host, secret, now) };
  }
  const routes = await listServed(() => kube.list(ROUTES, namespace));
  const host = externalRoute(routes as RouteLike[]);
  if (!host) return undefined;
  const cm = await kube.get(CONFIG_MAPS, namespace, ROUTE_CA_CONFIG_MAP);
  return { host, cert: routeCert(host, cm, now) };
}
