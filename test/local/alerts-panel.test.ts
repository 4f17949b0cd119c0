/**
 * The dashboard's alerts panel without a Prometheus, or with one that cannot be read, and the
 * `--prometheus` flag's check. The panel over a live Prometheus is test/e2e/prometheus-alerts.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { alertsPanel, prometheusUrl } from '../../local/dashboard/alerts.ts';

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

describe('alerts panel', () => {
  it('without --prometheus: says none is configured', async () => {
    // act
    const panel = await alertsPanel(undefined);
    // assert
    assert.deepEqual(panel, { configured: false });
  });

  it('a Prometheus that does not answer: the panel names it and the error, with no alerts', async () => {
    // arrange
    const url = `http://127.0.0.1:${await closedPort()}`;
    // act
    const panel = await alertsPanel(url, 1000);
    // assert
    assert.equal(panel.configured, true);
    assert.ok(panel.configured && panel.alerts.length === 0 && panel.error?.startsWith(`cannot read ${url}/api/v1/alerts: `), JSON.stringify(panel));
  });

  const flags: [string, string | RegExp][] = [
    ['http://127.0.0.1:9090', 'http://127.0.0.1:9090'],
    ['https://prom.example:9090/', 'https://prom.example:9090'],
    ['http://127.0.0.1:9090/prometheus/', 'http://127.0.0.1:9090/prometheus'],
    ['localhost9090', /^--prometheus takes a URL such as http:\/\/127\.0\.0\.1:9090, got 'localhost9090'$/],
    ['ftp://127.0.0.1/', /^--prometheus takes an http or https URL, got 'ftp:\/\/127\.0\.0\.1\/'$/],
  ];
  for (const [raw, want] of flags) {
    it(`--prometheus ${raw} → ${String(want)}`, () => {
      // act + assert
      if (typeof want === 'string') assert.equal(prometheusUrl(raw), want);
      else assert.throws(() => prometheusUrl(raw), (err: Error) => want.test(err.message));
    });
  }
});
