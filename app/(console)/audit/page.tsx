import { Suspense } from 'react';
import { AuditScreen } from '@/components/audit/audit-screen';

export const metadata = { title: 'Audit log' };

export default function AuditPage() {
  return (
    <Suspense>
      <AuditScreen />
    </Suspense>
  );
}
