'use client';

import { useQuery } from '@tanstack/react-query';
import type { ApiKeyUsage } from '@/lib/api/api-keys';
import { apiKeyUsageQuery } from '@/lib/client/queries';
import styles from './audit.module.css';

/** "12 / 1,000": a use against its quota. */
function Use({ used, limit }: { used: number; limit: number }) {
  return (
    <span data-full={used >= limit ? 'true' : undefined}>
      {used.toLocaleString()} / {limit.toLocaleString()}
    </span>
  );
}

function refusals(k: ApiKeyUsage): string {
  const parts = Object.entries(k.refused)
    .filter(([, n]) => n > 0)
    .map(([quota, n]) => `${n.toLocaleString()} ${quota}`);
  return parts.length ? parts.join(', ') : 'none';
}

/**
 * Each API key's use of the lock service against its quotas (REDLOCK_API_KEY_QUOTAS):
 * locks held, acquires waiting, the acquire rate, and the acquires refused with 429, summed over
 * every console on the same masters (or this one's own when it could not read them: `scope`).
 */
export function ApiKeyQuotas() {
  const { data, error, isPending } = useQuery(apiKeyUsageQuery());
  const state = isPending ? 'loading' : error ? 'error' : 'ready';
  return (
    <section aria-labelledby="api-key-quotas-title" data-testid="api-key-quotas" style={{ marginTop: 32 }}>
      <div className={styles.header}>
        <div>
          <h2 id="api-key-quotas-title" className={styles.title}>
            API keys
          </h2>
          <p className={styles.subtitle}>
            {data?.scope === 'process'
              ? 'Each key’s use of the lock service in this console only (the masters did not answer for the other consoles’ use); past a quota, its acquires get 429.'
              : 'Each key’s use of the lock service against its quotas, through every console on these masters; past one, its acquires get 429.'}
          </p>
        </div>
      </div>
      <div className={styles.tableWrap} data-loading-state={state} role="region" aria-label="API keys and their quotas" tabIndex={0}>
        <table className={`${styles.table} ${styles.stacked}`}>
          <caption className="visually-hidden">API keys: locks held, acquires waiting and the acquire rate against each quota</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Locks held</th>
              <th scope="col">Acquires waiting</th>
              <th scope="col">Acquires a second (burst)</th>
              <th scope="col">Refused (429)</th>
            </tr>
          </thead>
          <tbody>
            {error ? (
              <tr>
                <td colSpan={5} className={styles.empty} role="alert">
                  The API keys&apos; use could not be read: {error.message}
                </td>
              </tr>
            ) : isPending ? (
              <tr>
                <td colSpan={5} className={styles.empty}>
                  Reading…
                </td>
              </tr>
            ) : data.keys.length === 0 ? (
              <tr>
                <td colSpan={5} className={styles.empty}>
                  No API key is configured (REDLOCK_API_KEYS).
                </td>
              </tr>
            ) : (
              data.keys.map((k) => (
                <tr key={k.name} data-testid="api-key-row" data-key={k.name}>
                  <td className={`${styles.stackWide} ${styles.stackHead}`}>client:{k.name}</td>
                  <td data-testid="api-key-held" data-label="Locks held">
                    <Use used={k.held} limit={k.quota.held} />
                  </td>
                  <td data-label="Acquires waiting">
                    <Use used={k.waiting} limit={k.quota.waiting} />
                  </td>
                  <td data-label="Acquires a second (burst)">
                    {k.quota.rate.toLocaleString()} ({k.quota.burst.toLocaleString()})
                  </td>
                  <td data-label="Refused (429)">{refusals(k)}</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}
