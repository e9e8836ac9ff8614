import { ScenariosScreen } from '@/components/scenarios/scenarios-screen';

export const metadata = { title: 'Scenarios' };

export default function ScenariosPage() {
  return <ScenariosScreen />;
}
