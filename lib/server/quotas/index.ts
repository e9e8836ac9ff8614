import 'server-only';
import type { ApiKeyUsageResponse } from '../../api/api-keys';
import { getAuth } from '../auth';
import { metrics } from '../metrics';
import { KeyQuotas, QUOTA_NAMES } from './key-quotas';
import { quotaSettings } from './settings';
import { SharedUsage } from './shared-usage';

export { QUOTA_NAMES, type KeyUsage, type QuotaName } from './key-quotas';
export { quotaSettings, QUOTA_DEFAULTS, type KeyQuota } from './settings';

let made: { quotas: KeyQuotas; shared: SharedUsage } | undefined;

function shared(): { quotas: KeyQuotas; shared: SharedUsage } {
  if (!made) {
    const quotas = new KeyQuotas(quotaSettings(process.env.REDLOCK_API_KEY_QUOTAS), (key, quota) =>
      metrics().apiKeyQuotaRefusals.inc({ key, quota }),
    );
    const sharing = new SharedUsage(quotas);
    sharing.start();
    made = { quotas, shared: sharing };
  }
  return made;
}

/**
 * The API keys' quotas (REDLOCK_API_KEY_QUOTAS, read once), shared with every console process on
 * the same masters (shared-usage.ts): the first call starts the exchange.
 */
export function keyQuotas(): KeyQuotas {
  return shared().quotas;
}

/** For a Prometheus scrape: each API key's use now. */
export function refreshQuotaMetrics(): void {
  const m = metrics();
  for (const use of keyQuotas().usage()) {
    m.apiKeyLocksHeld.set({ key: use.key }, use.held);
    m.apiKeyAcquiresWaiting.set({ key: use.key }, use.waiting);
    for (const quota of QUOTA_NAMES) m.apiKeyQuotaRefusals.inc({ key: use.key, quota }, 0); // present at zero
  }
}

/**
 * Every configured API key's use against its quotas (a key not used yet at zero), for GET
 * /api/api-keys: every console's use as the masters have it now (`shared`), or this process's
 * own when the masters were not read within REPORT_FRESH_MS (`process`).
 */
export async function apiKeyUsage(): Promise<ApiKeyUsageResponse> {
  const { quotas, shared: sharing } = shared();
  await sharing.syncNow();
  const scope = sharing.fresh ? 'shared' : 'process';
  const used = new Map(quotas.usage(Date.now(), scope).map((u) => [u.key, u]));
  const names = [...new Set([...(await getAuth()).accounts.apiKeyNames(), ...used.keys()])].sort();
  return {
    scope,
    keys: names.map((name) => {
      const use = used.get(name) ?? quotas.idle(name);
      return { name, held: use.held, waiting: use.waiting, quota: { ...use.quota }, refused: use.refused };
    }),
  };
}
