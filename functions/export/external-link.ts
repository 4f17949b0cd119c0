/**
 * The export's external link (KubeVirt's getExternalLinks): where an Ingress in KubeVirt's
 * namespace sends traffic to the `virt-exportproxy` service, the export is reachable at
 * `https://<host>/api/export.kubevirt.io/v1/namespaces/<ns>/virtualmachineexports/<name>/…`, with
 * the certificate from the Ingress's TLS secret that serves that host. Without such an Ingress, an
 * OpenShift Route of virt-operator's to that service gives the host (its first admitted ingress),
 * with the certificate for it from the namespace's `kube-root-ca.crt` ConfigMap. Pure.
 */
import { X509Certificate } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';

/** The Service virt-operator creates for the export proxy; an Ingress to it publishes exports. */
export const EXPORT_PROXY_SERVICE = 'virt-exportproxy';

/** The minimum read of an Ingress (networking.k8s.io/v1). */
export interface IngressLike {
  spec?: {
    defaultBackend?: { service?: { name?: string } };
    rules?: { host?: string; http?: { paths?: { backend?: { service?: { name?: string } } }[] } }[];
    tls?: { secretName?: string }[];
  };
}

/** The host an Ingress publishes the export proxy at, or "" (KubeVirt's getHostFromIngress). */
export function ingressHost(ing: IngressLike): string {
  const spec = ing.spec ?? {};
  if (spec.defaultBackend?.service) return spec.defaultBackend.service.name === EXPORT_PROXY_SERVICE ? (spec.rules?.[0]?.host ?? '') : '';
  for (const rule of spec.rules ?? []) {
    if (!rule.http) continue;
    if (rule.http.paths?.some((p) => p.backend?.service?.name === EXPORT_PROXY_SERVICE) && rule.host) return rule.host;
  }
  return '';
}

/** The first Ingress that publishes the proxy: its host and the name of its TLS secret. */
export function externalIngress(ingresses: readonly IngressLike[]): { host: string; secretName: string } | undefined {
  for (const ing of ingresses) {
    const host = ingressHost(ing);
    if (host) return { host, secretName: ing.spec?.tls?.find((t) => t.secretName)?.secretName ?? '' };
  }
  return undefined;
}

/** virt-operator's label on what it manages; KubeVirt reads only Routes that carry it (either value). */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_OPERATOR = ['virt-operator', 'kubevirt-operator'] as const;
/** The ConfigMap (and key) a Route's certificate is looked up in, in KubeVirt's namespace. */
export const ROUTE_CA_CONFIG_MAP = 'kube-root-ca.crt';
export const ROUTE_CA_KEY = 'ca.crt';

/** The minimum read of an OpenShift Route (route.openshift.io/v1). */
export interface RouteLike {
  metadata?: { labels?: Record<string, string> };
  spec?: { to?: { name?: string } };
  status?: { ingress?: { host?: string }[] };
}

/** The host a Route publishes the export proxy at, or "" (KubeVirt's getHostFromRoute). */
export function routeHost(route: RouteLike): string {
  return route.spec?.to?.name === EXPORT_PROXY_SERVICE ? (route.status?.ingress?.[0]?.host ?? '') : '';
}

/** The first of virt-operator's Routes that publishes the proxy: its host. */
export function externalRoute(routes: readonly RouteLike[]): string | undefined {
  for (const r of routes) {
    const managedBy = r.metadata?.labels?.[MANAGED_BY_LABEL];
    if (!managedBy || !(MANAGED_BY_OPERATOR as readonly string[]).includes(managedBy)) continue;
    const host = routeHost(r);
    if (host) return host;
  }
  return undefined;
}

const PEM = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificates of a bundle that parse. */
function parseCerts(pem: string): X509Certificate[] {
  const out: X509Certificate[] = [];
  for (const block of pem.match(PEM) ?? []) {
    try {
      out.push(new X509Certificate(block));
    } catch {
      // KubeVirt stops at a bad block; a certificate we cannot read is simply not offered.
    }
  }
  return out;
}

const validAt = (c: X509Certificate, now: number) => Date.parse(c.validFrom) < now && Date.parse(c.validTo) > now;
const commonName = (dn: string) => /(?:^|\n|,\s*)CN=([^\n,]+)/.exec(dn)?.[1] ?? '';
const altNames = (c: X509Certificate) => (c.subjectAltName ?? '').split(/,\s*/).map((n) => n.replace(/^DNS:/, ''));

/** The host itself or `*.<its domain>`. */
function matches(host: string, name: string): boolean {
  const dot = host.indexOf('.');
  return name === host || name === `*.${dot >= 0 ? host.slice(dot + 1) : host}`;
}

/**
 * KubeVirt's findCertByHostName: the newest certificate valid now whose common name or a
 * subject-alternative name serves `host`, followed by its issuer's chain when it is not a CA and
 * not self-issued; failing that, every certificate valid now.
 */
export function certForHost(host: string, pem: string, now: number, depth = 0): string {
  const certs = parseCerts(pem);
  let best: X509Certificate | undefined;
  for (const c of certs) {
    if (!matches(host, commonName(c.subject)) && !altNames(c).some((n) => matches(host, n))) continue;
    if (!best || (Date.parse(c.validTo) > Date.parse(best.validTo) && Date.parse(c.validFrom) < now)) best = c;
  }
  if (best && validAt(best, now)) {
    const issuer = commonName(best.issuer);
    const chain = issuer !== commonName(best.subject) && !best.ca && depth < 8 ? certForHost(issuer, pem, now, depth + 1) : '';
    return [best.toString().trim(), chain].filter((s) => s !== '').join('\n');
  }
  return certs.filter((c) => validAt(c, now)).map((c) => c.toString().trim()).join('\n');
}

/** The certificate an Ingress's TLS secret offers for `host` ("" without one). */
export function ingressCert(host: string, secret: V1Secret | undefined, now: number): string {
  const crt = secret?.data?.['tls.crt'];
  return crt ? certForHost(host, Buffer.from(crt, 'base64').toString('utf8'), now) : '';
}

/** The certificate `kube-root-ca.crt` offers for a Route's `host` ("" without one). */
export function routeCert(host: string, configMap: { data?: Record<string, string> } | undefined, now: number): string {
  const pem = configMap?.data?.[ROUTE_CA_KEY];
  return pem ? certForHost(host, pem, now) : '';
}

/** The base every external URL of the export starts with (host and API path, no scheme). */
export function externalBase(host: string, namespace: string, name: string): string {
  return `${host}/api/export.kubevirt.io/v1/namespaces/${namespace}/virtualmachineexports/${name}`;
}
