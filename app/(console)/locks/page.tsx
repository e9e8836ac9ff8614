import { Suspense } from 'react';
import { LocksScreen } from '@/components/locks/locks-screen';

export const metadata = { title: 'Locks' };

export default function LocksPage() {
  return (
    <Suspense>
      <LocksScreen />
    </Suspense>
  );
}
