import 'server-only';
import type { ApiKeyUsageResponse } from '../../api/api-keys';
import { getAuth } from '../auth';
import { metrics } from '../metrics';
import { KeyQuotas, QUOTA_NAMES } from './key-quotas';
import { quotaSettings } from './settings';

export { QUOTA_NAMES, type KeyUsage, type QuotaName } from './key-quotas';
export { quotaSettings, QUOTA_DEFAULTS, type KeyQuota } from './settings';

const KEY = Symbol.for('redlock-console.key-quotas');

/** The API keys' quotas of this console process (REDLOCK_API_KEY_QUOTAS, read once). */
export function keyQuotas(): KeyQuotas {
  const holder = globalThis as { [KEY]?: KeyQuotas };
  return (holder[KEY] ??= new KeyQuotas(quotaSettings(process.env.REDLOCK_API_KEY_QUOTAS), (key, quota) =>
    metrics().apiKeyQuotaRefusals.inc({ key, quota }),
  ));
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

/** Every configured API key's use against its quotas (a key not used yet at zero), for GET /api/api-keys. */
export async function apiKeyUsage(): Promise<ApiKeyUsageResponse> {
  const quotas = keyQuotas();
  const used = new Map(quotas.usage().map((u) => [u.key, u]));
  const names = [...new Set([...(await getAuth()).accounts.apiKeyNames(), ...used.keys()])].sort();
  return {
    scope: 'process',
    keys: names.map((name) => {
      const use = used.get(name) ?? quotas.idle(name);
      return { name, held: use.held, waiting: use.waiting, quota: { ...use.quota }, refused: use.refused };
    }),
  };
}
