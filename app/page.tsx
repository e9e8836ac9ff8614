import { NodeList } from '@/components/nodes/node-list';

export default function HomePage() {
  return (
    <>
      <h1 className="page-title">Cluster</h1>
      <NodeList />
    </>
  );
}
