import { Nodes, pickNodes, type ScenarioDefinition } from '../script';
import { cleanStep, OUTCOME_CHOICES as O } from './common';

const R = 'ledger';
const TTL = 2_000;

export const slowNetworkScenario: ScenarioDefinition = {
  id: 'slow-network',
  number: 7,
  title: 'Slow network',
  summary:
    "Latency eats into the lease: the validity shrinks by every round trip. At 1.2 s per round trip the acquire fails with LockExpiredError and deletes what it set — not because of Redlock's own rule (plain Redlock would still grant, with about 0.78 s left), but because this library's fenced acquire needs a second round to confirm the fence.",
  lesson:
    'Validity is the TTL minus the time the asking took (the distlock page\'s step 4), minus the drift allowance (the page\'s "few milliseconds in order to compensate for clock drift", the CLOCK_DRIFT of its MIN_VALIDITY; 1% of the TTL + 2 ms is what the reference implementations take off). A lock that would be over before it is granted is refused, and its keys are cleaned up. Every extra round trip counts: this library confirms the fence in a second round, so over a slow network it gives up sooner than plain Redlock would.',
  estimatedSeconds: 18,
  tags: ['network', 'validity'],
  build: (rng) => {
    const slow = pickNodes(rng, 3);
    return {
      clients: [
        { name: 'A', description: 'a worker; waits up to 2.5 s for a node, longer than the TTL on purpose', nodeTimeoutMs: 2_500 },
        { name: 'B', description: 'a second worker, the same node timeout', nodeTimeoutMs: 2_500 },
      ],
      resources: [{ name: R, description: 'the resource' }],
      maxTtlMs: TTL,
      ttlMs: TTL,
      simulated: [],
      steps: [
        cleanStep(),
        {
          id: 'baseline',
          do: 'acquire',
          who: 'A',
          resource: R,
          ttlMs: TTL,
          title: 'Baseline',
          say: 'Baseline: the votes take about a millisecond. Validity = TTL − elapsed − drift allowance (1% of the TTL + 2 ms). These clients wait up to 2.5 s for a node, longer than the 2 s TTL, although the distlock page advises a timeout small next to the TTL (5–50 ms for a 10 s TTL). That is on purpose: with a short timeout the slow nodes would just count as down and we would see QuorumUnavailable. The lock core still never waits past the validity horizon (TTL − drift allowance, 1.98 s here): after that no grant could leave any validity.',
        },
        {
          id: 'baseline-holds',
          do: 'wait-validity',
          who: 'A',
          resource: R,
          title: 'A uses its whole validity',
          say: 'A works until its validity is over (compare the length of its bar with the next one), then releases.',
        },
        { id: 'baseline-release', do: 'release', who: 'A', resource: R, chain: true, title: 'A releases', say: 'A releases.' },
        {
          id: 'slow-600',
          do: 'node',
          action: { action: 'latency', latencyMs: 600 },
          nodes: slow,
          title: `${Nodes(slow)}: +600 ms`,
          say: `${Nodes(slow)} now answer 600 ms late. Any majority has to include one of them.`,
        },
        {
          id: 'slow-grant',
          do: 'acquire',
          who: 'A',
          resource: R,
          ttlMs: TTL,
          title: 'A asks over a slow link',
          say: "A asks again. Both rounds wait for a slow node: the votes, then the fence confirmation (the second round is this library's: plain Redlock has only the votes).",
        },
        {
          id: 'slow-holds',
          do: 'wait-validity',
          who: 'A',
          resource: R,
          chain: true,
          title: 'A uses its whole validity',
          say: 'A works until its validity is over: the same 2 s TTL, but most of it was spent on the wire.',
        },
        { id: 'slow-release', do: 'release', who: 'A', resource: R, chain: true, title: 'A releases', say: 'A releases.' },
        {
          id: 'p-slower',
          do: 'predict',
          title: 'Predict: slower still',
          say: 'The slow nodes are about to get slower.',
          question: `${Nodes(slow)} go to 1,200 ms per round trip — more than half the 2 s TTL. What happens when A asks?`,
          choices: [O.granted, O.expired, O.unavailable],
        },
        {
          id: 'slow-1200',
          do: 'node',
          action: { action: 'latency', latencyMs: 1_200 },
          nodes: slow,
          chain: true,
          title: `${Nodes(slow)}: +1,200 ms`,
          say: `${Nodes(slow)} now answer 1.2 s late.`,
        },
        {
          id: 'expired',
          do: 'acquire',
          who: 'A',
          resource: R,
          ttlMs: TTL,
          reveals: 'p-slower',
          chain: true,
          title: 'A asks',
          say: 'A asks.',
          explain: {
            LockExpiredError:
              'The votes arrive after 1.2 s. Plain Redlock would grant here, with 2 s − 1.2 s − 0.02 s ≈ 0.78 s of validity. But this library also confirms the fence on a majority, another 1.2 s round trip, and the lock core waits for it only until the validity horizon (1.98 s after it started asking). The confirmation cannot arrive in time, so the core gives up rather than hand over a lock with no time left, and sends a delete to every node.',
          },
        },
        {
          id: 'cleanup',
          do: 'wait-keys-gone',
          resource: R,
          title: 'Nothing left behind',
          say: 'The failed acquire sent a delete to every node. Over a slow link it can only know it failed once the validity is gone, so the deletes land about when the keys would have expired anyway — but no key outlives the attempt, and A never believed it held the lock.',
        },
        { id: 'heal', do: 'node', action: { action: 'heal' }, nodes: slow, title: 'Network heals', say: 'The network is back to normal.' },
        {
          id: 'b-acquires',
          do: 'acquire',
          who: 'B',
          resource: R,
          ttlMs: TTL,
          waitForNodes: slow,
          title: 'B asks',
          say: 'B asks: granted at once, with nearly the full validity.',
        },
        { id: 'b-releases', do: 'release', who: 'B', resource: R, title: 'B releases', say: 'B releases.' },
      ],
    };
  },
};
