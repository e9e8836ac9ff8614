'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ACTIVE_STATUSES, SPEEDS, type ScenarioId, type ScenarioSummary, type Speed } from '@/lib/api/scenarios';
import { currentRunQuery, scenarioKeys, scenarioListQuery, startScenarioRun } from '@/lib/client/scenario-queries';
import { meQuery } from '@/lib/client/session';
import { Glossed } from './glossary';
import { Player } from './player';
import styles from './scenarios.module.css';

/** The scenarios screen: the catalog, or the player of the current run. */
export function ScenariosScreen() {
  const { data: me } = useQuery(meQuery());
  const list = useQuery(scenarioListQuery());
  const current = useQuery(currentRunQuery());
  const queryClient = useQueryClient();
  // The run this browser is showing: kept on screen after it ends (here or in another browser) until "All scenarios".
  const [watching, setWatching] = useState<string | null>(null);
  const canOperate = me?.role === 'operator';
  const run = current.data?.run ?? null;
  const active = !!run && ACTIVE_STATUSES.includes(run.status);
  const activeRunId = active ? run.runId : null;
  // Adjusted while rendering (React's pattern for state that follows a prop): a run seen running stays watched.
  if (activeRunId !== null && watching !== activeRunId) setWatching(activeRunId);

  if (run && (active || watching === run.runId)) {
    return (
      <Player
        run={run}
        receivedAt={current.dataUpdatedAt}
        canOperate={canOperate}
        onBack={() => {
          setWatching(null);
          void queryClient.invalidateQueries({ queryKey: scenarioKeys.list });
        }}
      />
    );
  }

  return (
    <Catalog
      scenarios={list.data?.scenarios ?? []}
      loading={list.isPending}
      available={list.data?.available ?? false}
      problem={list.data?.problem ?? null}
      where={list.data?.where ?? null}
      canOperate={canOperate}
      lastRun={run ? { title: run.title, status: run.status } : null}
      onWatch={() => setWatching(run?.runId ?? null)}
      onStarted={(res) => {
        queryClient.setQueryData(scenarioKeys.current, res);
        setWatching(res.run?.runId ?? null);
      }}
    />
  );
}

function Catalog({
  scenarios,
  loading,
  available,
  problem,
  where,
  canOperate,
  lastRun,
  onWatch,
  onStarted,
}: {
  scenarios: ScenarioSummary[];
  loading: boolean;
  available: boolean;
  problem: string | null;
  where: string | null;
  canOperate: boolean;
  lastRun: { title: string; status: string } | null;
  onWatch: () => void;
  onStarted: (res: Awaited<ReturnType<typeof startScenarioRun>>) => void;
}) {
  const [seed, setSeed] = useState('');
  const [speed, setSpeed] = useState<Speed>(1);
  const [starting, setStarting] = useState<ScenarioId | null>(null);
  const [error, setError] = useState<string | null>(null);
  const seedNumber = seed.trim() === '' ? undefined : Number(seed);
  const seedProblem = seedNumber !== undefined && (!Number.isInteger(seedNumber) || seedNumber < 0 || seedNumber > 0xffff_ffff);

  const start = async (id: ScenarioId) => {
    setStarting(id);
    setError(null);
    try {
      onStarted(await startScenarioRun(id, { speed, ...(seedNumber !== undefined ? { seed: seedNumber } : {}) }));
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setStarting(null);
    }
  };

  return (
    <div className={styles.screen} data-testid="scenarios">
      <div className={styles.catalogHead}>
        <div>
          <h1 className={styles.title}>Scenarios</h1>
          <p className={styles.subtitle}>
            Guided runs on real nodes of the teaching sandbox: real Redlock clients, real crashes, partitions and latency. Watch what every
            node holds and what every client believes; predict before you see; the checker turns red the moment two clients hold the same
            lock.
          </p>
        </div>
        <div className={styles.options}>
          <label className={styles.option}>
            <span>Seed</span>
            <input
              value={seed}
              onChange={(e) => setSeed(e.target.value)}
              placeholder="random"
              inputMode="numeric"
              aria-invalid={seedProblem}
              className={seedProblem ? styles.invalid : undefined}
              data-testid="seed-input"
            />
          </label>
          <div className={styles.option} role="group" aria-label="Speed">
            <span>Speed</span>
            <div className={styles.speed}>
              {SPEEDS.map((s) => (
                <button
                  key={s}
                  type="button"
                  className={`${styles.speedButton} ${speed === s ? styles.speedOn : ''}`}
                  aria-pressed={speed === s}
                  onClick={() => setSpeed(s)}
                  data-testid={`speed-${s}`}
                >
                  {s}×
                </button>
              ))}
            </div>
          </div>
        </div>
      </div>
      {!loading && !available && problem && (
        <div className="callout callout-warn" role="alert" data-testid="scenarios-unavailable">
          <strong>Scenarios cannot run here.</strong> {problem}
        </div>
      )}
      {where && (
        // Everyone reads this before a run, operators included: what a run takes down, and what it never touches.
        <div className="callout" data-testid="scenarios-where">
          <strong>A run crashes, pauses and slows real nodes.</strong> {where}
        </div>
      )}
      {!canOperate && <div className="callout">Starting a run is for operators. You can watch a run an operator started.</div>}
      {error && (
        <div className="callout callout-bad" role="alert">
          {error}
        </div>
      )}
      {lastRun && (
        <div className={styles.lastRun}>
          <span>
            Last run: <strong>{lastRun.title}</strong> ({lastRun.status})
          </span>
          <button type="button" className="button small" onClick={onWatch}>
            Show it
          </button>
        </div>
      )}
      <ol className={styles.cards}>
        {scenarios.map((s) => (
          <li key={s.id} className={styles.card} data-testid={`scenario-card-${s.id}`}>
            <div className={styles.cardTop}>
              <span className={styles.number}>{s.number}</span>
              <h2 className={styles.cardTitle}>{s.title}</h2>
              <span className="muted small" title="at 1×, plus the time you take to predict">
                ~{s.estimatedSeconds} s
              </span>
            </div>
            <p className={styles.cardSummary}>{s.summary}</p>
            <p className={styles.cardLesson}>
              <Glossed text={s.lesson} />
            </p>
            <div className={styles.cardFoot}>
              <span className={styles.tags}>
                {s.tags.map((t) => (
                  <span key={t} className={styles.tag}>
                    {t}
                  </span>
                ))}
              </span>
              <button
                type="button"
                className="button button-primary"
                disabled={!available || !canOperate || seedProblem || starting !== null}
                onClick={() => void start(s.id)}
                aria-label={`Run scenario ${s.number}: ${s.title}`}
              >
                {starting === s.id ? 'Starting…' : 'Run'}
              </button>
            </div>
          </li>
        ))}
      </ol>
    </div>
  );
}
