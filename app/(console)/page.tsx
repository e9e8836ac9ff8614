import { SessionGate } from '@/components/auth/session-gate';
import { NodeList } from '@/components/nodes/node-list';

export default function HomePage() {
  return (
    <SessionGate>
      <h1 className="page-title">Cluster</h1>
      <NodeList />
    </SessionGate>
  );
}
