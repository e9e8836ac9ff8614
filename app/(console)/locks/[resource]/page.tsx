import { LockDetail } from '@/components/locks/lock-detail';
import { SlotLockDetail } from '@/components/locks/slot-lock-detail';

/** The path segment is the URL-encoded resource name (slashes included). */
function decodeResource(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

type Props = { params: Promise<{ resource: string }>; searchParams: Promise<{ kind?: string | string[] }> };

export async function generateMetadata({ params }: Props) {
  const { resource } = await params;
  return { title: decodeResource(resource) };
}

/** A mutex by default; `?kind=semaphore` or `?kind=rwlock` shows that semaphore's or read-write lock's slots. */
export default async function LockPage({ params, searchParams }: Props) {
  const { resource } = await params;
  const { kind } = await searchParams;
  if (kind === 'semaphore' || kind === 'rwlock') return <SlotLockDetail kind={kind} resource={decodeResource(resource)} />;
  return <LockDetail resource={decodeResource(resource)} />;
}
