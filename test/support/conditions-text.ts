/**
 * An object's conditions in one line, for the messages a test or a benchmark prints where a run
 * stopped: `Type=Status(Reason "message")`, comma-separated.
 */
export function conditionsText(conditions: readonly { type?: string; status?: string; reason?: string; message?: string }[] | undefined): string {
  return (conditions ?? []).map((c) => `${c.type}=${c.status}${c.reason || c.message ? `(${[c.reason, c.message ? `"${c.message}"` : undefined].filter(Boolean).join(' ')})` : ''}`).join(',');
}
