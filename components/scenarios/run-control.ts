'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { RunAction, RunActionBody, RunView } from '@/lib/api/scenarios';
import { runControl, scenarioKeys } from '@/lib/client/scenario-queries';

export type Act = (action: RunAction, body?: RunActionBody) => Promise<void>;

/** Sends a run action: the action under way (`busy`), the last one's error, the answer into the current run's query. */
export function useRunControl(): { act: Act; busy: RunAction | null; error: string | null } {
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<RunAction | null>(null);
  const act = async (action: RunAction, body: RunActionBody = {}) => {
    setBusy(action);
    setError(null);
    try {
      const res = await runControl(action, body);
      queryClient.setQueryData(scenarioKeys.current, res);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(null);
    }
  };
  return { act, busy, error };
}

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

/** Keyboard: space play/pause, → step, r restart (not after the shell's `g`); never while typing or in a dialog. */
export function useRunShortcuts(act: Act, state: { mode: RunView['mode']; active: boolean; canOperate: boolean }): void {
  const actRef = useRef(act);
  useEffect(() => {
    actRef.current = act;
  });
  const modeRef = useRef(state);
  useEffect(() => {
    modeRef.current = state;
  });
  useEffect(() => {
    let lastG = 0;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || typing(e.target) || document.querySelector('dialog[open]')) return;
      const { mode, active: isActive, canOperate: may } = modeRef.current;
      if (e.key === 'g') {
        lastG = Date.now();
        return;
      }
      if (!may) return;
      if (e.key === ' ' && isActive) {
        e.preventDefault();
        void actRef.current(mode === 'play' ? 'pause' : 'play');
      } else if (e.key === 'ArrowRight' && isActive) {
        e.preventDefault();
        void actRef.current('step');
      } else if (e.key === 'r' && Date.now() - lastG > 1_000) {
        e.preventDefault();
        void actRef.current('restart');
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
