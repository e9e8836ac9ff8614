import { OverviewScreen } from '@/components/overview/overview-screen';

export const metadata = { title: 'Overview' };

export default function OverviewPage() {
  return <OverviewScreen />;
}
