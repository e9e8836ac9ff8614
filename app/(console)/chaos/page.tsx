import { ChaosScreen } from '@/components/chaos/chaos-screen';

export const metadata = { title: 'Chaos' };

export default function ChaosPage() {
  return <ChaosScreen />;
}
