import { LockDetail } from '@/components/locks/lock-detail';

/** The path segment is the URL-encoded resource name (slashes included). */
function decodeResource(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export async function generateMetadata({ params }: { params: Promise<{ resource: string }> }) {
  const { resource } = await params;
  return { title: decodeResource(resource) };
}

export default async function LockPage({ params }: { params: Promise<{ resource: string }> }) {
  const { resource } = await params;
  return <LockDetail resource={decodeResource(resource)} />;
}
