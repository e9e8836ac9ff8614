import { Suspense } from 'react';
import { LockMatrix } from '@/components/locks/lock-matrix';

export const metadata = { title: 'Locks' };

export default function LocksPage() {
  return (
    <Suspense>
      <LockMatrix />
    </Suspense>
  );
}
