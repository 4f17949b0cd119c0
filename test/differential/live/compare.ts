/**
 * One scenario's verdict: KubeVirt's run against ours, after normalise.ts — objects matched by
 * kind and normalised name, compared field by field (pod-diff.ts's `diffValues`: arrays of named
 * things by name), the Events' `kind/name type reason component` lines as sets.
 */
import { diffValues, type Difference } from '../pod-diff.ts';
import { normaliseAll, normaliseString, renamesOf, type LiveObject } from './normalise.ts';
import { eventMessageKey, type ScenarioRun } from './lane.ts';

/** A scenario's result. */
export interface ScenarioVerdict {
  readonly scenario: string;
  readonly identical: boolean;
  /** A step one side did not get through (`ours: …`, `KubeVirt's: …`). */
  readonly stuck: string[];
  /** Objects only one side has (`Kind/name`). */
  readonly onlyOurs: string[];
  readonly onlyKubevirt: string[];
  /** Per object both have, the differing paths. */
  readonly differences: Record<string, Difference[]>;
  /** Event lines only one side has. */
  readonly eventsOnlyOurs: string[];
  readonly eventsOnlyKubevirt: string[];
  /** Each side's first message per `Kind type reason`, to say what a one-sided event was about. */
  readonly eventMessages?: { readonly ours: Record<string, string>; readonly kubevirt: Record<string, string> };
}

function normaliseEvents(events: readonly string[], objects: readonly LiveObject[]): string[] {
  const r = renamesOf(objects);
  // A generated name of an object no longer there (a restarted VMI's first pod) keeps its random
  // suffix: the upstream alphabet's five characters become `<random>`.
  const gone = (name: string) => (r.names.has(name) ? name : name.replace(/-[bcdfghjklmnpqrstvwxz2456789]{5}$/, '-<random>'));
  return [...new Set(events.map((e) => e.replace(/^(\S+?)\/(\S+)/, (_m, kind: string, name: string) => `${kind}/${normaliseString(gone(name), r, undefined)}`)))].sort();
}

/** Compares one scenario's two runs. */
export function compareRuns(ours: ScenarioRun, kubevirt: ScenarioRun): ScenarioVerdict {
  const a = normaliseAll(ours.objects);
  const b = normaliseAll(kubevirt.objects);
  const differences: Record<string, Difference[]> = {};
  for (const [key, o] of a) {
    const k = b.get(key);
    if (!k) continue;
    const d = diffValues(o, k);
    if (d.length > 0) differences[key] = d;
  }
  const ea = normaliseEvents(ours.events, ours.objects);
  const eb = normaliseEvents(kubevirt.events, kubevirt.objects);
  const stuck = [...(ours.stuck ? [`ours: ${ours.stuck}`] : []), ...(kubevirt.stuck ? [`KubeVirt's: ${kubevirt.stuck}`] : [])];
  const onlyOurs = [...a.keys()].filter((k) => !b.has(k)).sort();
  const onlyKubevirt = [...b.keys()].filter((k) => !a.has(k)).sort();
  const eventsOnlyOurs = ea.filter((e) => !eb.includes(e));
  const eventsOnlyKubevirt = eb.filter((e) => !ea.includes(e));
  const identical = stuck.length === 0 && onlyOurs.length === 0 && onlyKubevirt.length === 0 && Object.keys(differences).length === 0 && eventsOnlyOurs.length === 0 && eventsOnlyKubevirt.length === 0;
  return { scenario: ours.scenario, identical, stuck, onlyOurs, onlyKubevirt, differences, eventsOnlyOurs, eventsOnlyKubevirt, eventMessages: { ours: ours.eventMessages ?? {}, kubevirt: kubevirt.eventMessages ?? {} } };
}

/** A verdict as text: `identical`, or each kind of difference on its own lines. */
export function formatVerdict(v: ScenarioVerdict, maxPaths = 60): string {
  if (v.identical) return `${v.scenario}: identical`;
  const show = (x: unknown) => (x === undefined ? '(absent)' : JSON.stringify(x).slice(0, 160));
  const lines = [`${v.scenario}: differs`];
  for (const s of v.stuck) lines.push(`  stuck ${s}`);
  if (v.onlyOurs.length) lines.push(`  only ours: ${v.onlyOurs.join(', ')}`);
  if (v.onlyKubevirt.length) lines.push(`  only KubeVirt's: ${v.onlyKubevirt.join(', ')}`);
  let n = 0;
  for (const [key, diffs] of Object.entries(v.differences)) {
    for (const d of diffs) {
      if (n++ >= maxPaths) break;
      lines.push(`  ${key} ${d.path}: ours ${show(d.ours)} vs KubeVirt's ${show(d.kubevirt)}`);
    }
  }
  if (n > maxPaths) lines.push(`  … ${n - maxPaths} more paths`);
  // `Kind/name type reason component` → the message that side's first such Event carried.
  const said = (e: string, messages: Record<string, string> = {}): string => {
    const [kindName = '', type, reason] = e.split(' ');
    const message = messages[eventMessageKey(kindName.split('/')[0], type, reason)];
    return message ? ` — "${message.slice(0, 240)}"` : '';
  };
  for (const e of v.eventsOnlyOurs) lines.push(`  event only ours: ${e}${said(e, v.eventMessages?.ours)}`);
  for (const e of v.eventsOnlyKubevirt) lines.push(`  event only KubeVirt's: ${e}${said(e, v.eventMessages?.kubevirt)}`);
  return lines.join('\n');
}
