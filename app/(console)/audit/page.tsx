import { Suspense } from 'react';
import { ApiKeyQuotas } from '@/components/audit/api-key-quotas';
import { AuditScreen } from '@/components/audit/audit-screen';
import { LockServiceLog } from '@/components/audit/lock-service-log';

export const metadata = { title: 'Audit log' };

export default function AuditPage() {
  return (
    <Suspense>
      <AuditScreen />
      <LockServiceLog />
      <ApiKeyQuotas />
    </Suspense>
  );
}
