import { NodesScreen } from '@/components/nodes/nodes-screen';

export const metadata = { title: 'Nodes' };

export default function NodesPage() {
  return <NodesScreen />;
}
