/**
 * The dashboard's alerts panel: what a Prometheus the user points `up --prometheus URL` at
 * reports through its HTTP API (`/api/v1/alerts`) — its own evaluation of KubeVirt's rules
 * (infra/monitoring/kubevirt-rules.yaml) over the runtime's /metrics, never a second evaluation
 * here, so the panel and the user's Alertmanager agree. Read by the server (the page cannot reach
 * another origin), on each page poll, with a short timeout.
 */

/** One alert as the panel shows it. */
export interface PanelAlert {
  readonly name: string;
  readonly state: string;
  readonly severity: string;
  /** The labels that say what it is about (namespace, name, vmi, node…), without the rule's fixed ones. */
  readonly subject: string;
  readonly summary: string;
  /** Epoch ms the alert became active, when Prometheus says. */
  readonly activeAt: number | undefined;
}

export type AlertsPanel =
  | { readonly configured: false }
  | { readonly configured: true; readonly url: string; readonly alerts: readonly PanelAlert[]; readonly error?: string };

/** Labels every KubeVirt alert carries: not what the alert is about. */
const FIXED = new Set(['alertname', 'severity', 'kubernetes_operator_component', 'kubernetes_operator_part_of', 'operator_health_impact']);

interface PromAlert {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  state?: string;
  activeAt?: string;
}

/** Firing first, then pending; by name within each. */
function order(a: PanelAlert, b: PanelAlert): number {
  return (a.state === 'firing' ? 0 : 1) - (b.state === 'firing' ? 0 : 1) || a.name.localeCompare(b.name) || a.subject.localeCompare(b.subject);
}

/** Validates `--prometheus`: an http(s) URL, returned without a trailing slash. */
export function prometheusUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`--prometheus takes a URL such as http://127.0.0.1:9090, got '${raw}'`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`--prometheus takes an http or https URL, got '${raw}'`);
  return u.href.replace(/\/+$/, '');
}

/** The panel's content: the alerts Prometheus reports now, or why it could not be read. */
export async function alertsPanel(url: string | undefined, timeoutMs = 2000): Promise<AlertsPanel> {
  if (!url) return { configured: false };
  try {
    const res = await fetch(`${url}/api/v1/alerts`, { signal: AbortSignal.timeout(timeoutMs) });
    const body = (await res.json()) as { status?: string; error?: string; data?: { alerts?: PromAlert[] } };
    if (!res.ok || body.status !== 'success') return { configured: true, url, alerts: [], error: `Prometheus answered ${res.status}: ${body.error ?? 'not a success'}` };
    const alerts = (body.data?.alerts ?? []).map((a): PanelAlert => {
      const labels = a.labels ?? {};
      const activeAt = a.activeAt ? Date.parse(a.activeAt) : NaN;
      return {
        name: labels.alertname ?? '',
        state: a.state ?? '',
        severity: labels.severity ?? '',
        subject: Object.entries(labels).filter(([k]) => !FIXED.has(k)).map(([k, v]) => `${k}=${v}`).join(' '),
        summary: a.annotations?.summary ?? a.annotations?.description ?? '',
        activeAt: Number.isNaN(activeAt) ? undefined : activeAt,
      };
    });
    return { configured: true, url, alerts: alerts.sort(order) };
  } catch (err) {
    return { configured: true, url, alerts: [], error: `cannot read ${url}/api/v1/alerts: ${err instanceof Error ? err.message : String(err)}` };
  }
}
