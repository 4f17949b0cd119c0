/**
 * What one identity did, read from the sandbox API server's audit log: its writes as
 * `verb resource[/sub] name` (events as `event Reason`), and its events as `Type Reason: message`.
 * Reconcile tests compare these lists whole.
 */
import type { ApiServer } from '../../sandbox/apiserver/index.ts';

export function auditActions(server: ApiServer, identity: string): string[] {
  return server.audit.query({ identity }).flatMap((e) => {
    if (e.resource === 'events') return [`event ${String((e.object as { reason?: unknown }).reason)}`];
    if (e.verb === 'get' || e.verb === 'list') return [];
    return [`${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''}${e.name ? ` ${e.name}` : ''}`];
  });
}

export function auditEvents(server: ApiServer, identity: string): string[] {
  return server.audit
    .query({ identity })
    .filter((e) => e.resource === 'events')
    .map((e) => {
      const o = e.object as { type?: string; reason?: string; message?: string };
      return `${o.type ?? ''} ${o.reason ?? ''}: ${o.message ?? ''}`;
    });
}
