import { Playground } from '@/components/playground/playground';

export const metadata = { title: 'Playground' };

export default function PlaygroundPage() {
  return <Playground />;
}
