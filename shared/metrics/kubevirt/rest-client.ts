/**
 * KubeVirt's REST client metrics for the Kubernetes calls a reconcile makes:
 * `kubevirt_rest_client_requests_total{code,method,host,resource,verb}` and
 * `kubevirt_rest_client_request_latency_seconds{verb,url}`, with KubeVirt's rules for the verb
 * (LIST/GET/WATCH/CREATE/UPDATE/PATCH/DELETE, read off the URL path as KubeVirt reads it) and
 * client-go's URL template for `url` (namespace, name and query values replaced by
 * placeholders), and `kubevirt_rest_client_rate_limiter_duration_seconds` at 0 s per request. Every call of our client is exactly one HTTP request, so one call is one count.
 */
import { EVENTS, PODS, type Resource } from '../../api/resources.ts';
import { httpCodeOf } from '../../kube/api-write.ts';
import { decorateKubeClient } from '../../kube/call-counter.ts';
import type { KubeClient } from '../../kube/client.ts';
import { resourcePath } from '../../kube/requests.ts';
import type { MetricsRegistry } from '../registry.ts';
import { REST_CLIENT } from './catalog.ts';
import { addMetric, observeMetric } from './record.ts';

/** The HTTP request one client call makes: method, path and query parameter names. */
interface HttpShape {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  /** The same path with the namespace and name replaced as client-go's URL template does. */
  readonly template: string;
  readonly query: readonly string[];
}

const SEGMENT = '[A-Za-z0-9.\\-]*';
const RES = `(${SEGMENT})`;
/** KubeVirt's resource patterns, tried in order (watches, namespaced, cluster-wide). */
const RESOURCE_PATTERNS = [
  `/api/${SEGMENT}/watch/namespaces/${SEGMENT}/${RES}`,
  `/api/${SEGMENT}/watch/${RES}`,
  `/apis/${SEGMENT}/${SEGMENT}/watch/namespaces/${SEGMENT}/${RES}`,
  `/apis/${SEGMENT}/${SEGMENT}/watch/${RES}`,
  `/api/${SEGMENT}/namespaces/${SEGMENT}/${RES}`,
  `/apis/${SEGMENT}/${SEGMENT}/namespaces/${SEGMENT}/${RES}`,
  `/api/${SEGMENT}/${RES}`,
  `/apis/${SEGMENT}/${SEGMENT}/${RES}`,
].map((p) => new RegExp(p));

/** The resource KubeVirt reads off a path; '' when none matches. */
export function resourceOfPath(path: string): string {
  for (const re of RESOURCE_PATTERNS) {
    const m = re.exec(path);
    if (m) return m[1] ?? '';
  }
  return '';
}

/** KubeVirt's verb of a request: a GET is a WATCH, a LIST (the path ends with its resource) or a GET. */
export function kubevirtVerb(method: string, path: string, query: readonly string[] = []): string {
  switch (method) {
    case 'GET': {
      if (path.includes('/watch/') || query.includes('watch=true')) return 'WATCH';
      const resource = resourceOfPath(path);
      if (resource === '') return 'none';
      return path.endsWith(resource) ? 'LIST' : 'GET';
    }
    case 'PUT':
      return 'UPDATE';
    case 'POST':
      return 'CREATE';
    default:
      return method;
  }
}

/** client-go's `finalURLTemplate` path: `{namespace}` and `{name}` where the object's were. */
function templateOf(res: Resource, namespace: string | undefined, name: string | undefined, subresource: string | undefined): string {
  const finalSegment = subresource === 'status' || subresource === 'finalize';
  // client-go templates by segment count; a namespaced object's subresource other than status
  // keeps its name, which is what this reproduces.
  return resourcePath(res, namespace === undefined ? undefined : '{namespace}', name === undefined ? undefined : finalSegment || subresource === undefined ? '{name}' : name, subresource as never);
}

function shapeOf(method: keyof KubeClient, args: readonly unknown[]): HttpShape {
  if (method === 'createEvent') {
    const ns = (args[0] as { involvedObject?: { namespace?: string } } | undefined)?.involvedObject?.namespace ?? 'default';
    return { method: 'POST', path: resourcePath(EVENTS, ns), template: resourcePath(EVENTS, '{namespace}'), query: [] };
  }
  if (method === 'evict') {
    const [ns, name] = args as [string, string];
    return { method: 'POST', path: resourcePath(PODS, ns, name, 'eviction'), template: resourcePath(PODS, '{namespace}', '{name}', 'eviction'), query: [] };
  }
  const res = args[0] as Resource;
  const obj = (args[1] ?? {}) as { metadata?: { namespace?: string; name?: string } };
  const opts = (i: number) => (args[i] ?? {}) as { subresource?: string; labelSelector?: string; fieldSelector?: string; resourceVersion?: string; limit?: number; continue?: string };
  const ns = (i: number) => (res.namespaced ? (args[i] as string | undefined) : undefined);
  const shape = (m: HttpShape['method'], namespace: string | undefined, name: string | undefined, sub: string | undefined, query: string[] = []): HttpShape => ({
    method: m,
    path: resourcePath(res, namespace, name, sub as never),
    template: templateOf(res, namespace, name, sub),
    query,
  });
  switch (method) {
    case 'get':
      return shape('GET', ns(1), args[2] as string, undefined, opts(3).resourceVersion ? ['resourceVersion'] : []);
    case 'list': {
      const o = opts(2);
      const query = (['labelSelector', 'fieldSelector', 'resourceVersion', 'limit', 'continue'] as const).filter((k) => o[k] !== undefined && o[k] !== '');
      return shape('GET', ns(1), undefined, undefined, query);
    }
    case 'create':
      return shape('POST', res.namespaced ? obj.metadata?.namespace : undefined, undefined, undefined);
    case 'update':
      return shape('PUT', res.namespaced ? obj.metadata?.namespace : undefined, obj.metadata?.name, opts(2).subresource);
    case 'patch':
      return shape('PATCH', ns(1), args[2] as string, opts(4).subresource);
    case 'delete':
      return shape('DELETE', ns(1), args[2] as string, undefined);
    case 'getScale':
      return shape('GET', ns(1), args[2] as string, 'scale');
    case 'updateScale':
      return shape('PUT', ns(1), args[2] as string, 'scale');
  }
}

const VERB_OF_METHOD = { GET: 'get', POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as const;

/**
 * `inner` with each call counted and timed in `metrics` under KubeVirt's REST client names.
 * `server` is the API server's base URL (`https://host:port`), whose host is the `host` label.
 */
export function restClientMetrics(inner: KubeClient, metrics: MetricsRegistry, server: string, now: () => number = () => performance.now()): KubeClient {
  let host = 'none';
  try {
    host = new URL(server).host || 'none';
  } catch {
    // No parsable server (a test client): KubeVirt's "none".
  }
  const base = server.replace(/\/+$/, '');
  return decorateKubeClient(inner, (method, args, call) => {
    const shape = shapeOf(method, args);
    const started = now();
    const record = (answer: { result: unknown } | { error: unknown }) => {
      const code = httpCodeOf(VERB_OF_METHOD[shape.method], answer);
      const resource = resourceOfPath(shape.path);
      addMetric(metrics, REST_CLIENT.requests, {
        code: code === 0 ? '<error>' : String(code),
        method: shape.method,
        host,
        resource: resource || 'none',
        verb: resource ? kubevirtVerb(shape.method, shape.path) : 'none',
      });
      const query = shape.query.length ? `?${shape.query.map((k) => `${k}=%7Bvalue%7D`).join('&')}` : '';
      const url = `${base}${shape.template.replace(/\{/g, '%7B').replace(/\}/g, '%7D')}${query}`;
      const templated = { verb: kubevirtVerb(shape.method, shape.template), url };
      observeMetric(metrics, REST_CLIENT.requestLatency, templated, (now() - started) / 1000);
      // Our clients have no client-side rate limiter (the API server's Priority and Fairness
      // throttles instead): every request waited 0 s in one, which is what this says.
      observeMetric(metrics, REST_CLIENT.rateLimiterLatency, templated, 0);
    };
    return call().then(
      (result) => {
        record({ result });
        return result;
      },
      (error: unknown) => {
        record({ error });
        throw error;
      },
    );
  });
}
