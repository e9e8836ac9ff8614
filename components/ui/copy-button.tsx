'use client';

import { useEffect, useState } from 'react';
import { copyText } from './copy';

/**
 * A small "copy" button beside a value (a resource, a fence): the whole value goes to the
 * clipboard even where the screen shows it cut. `what` names the value for the button's label and
 * the announcement ("Copy fence", "fence copied").
 */
export function CopyButton({ value, what, className }: { value: string; what: string; className?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 1_500);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <button
      type="button"
      className={`copy-button ${className ?? ''}`}
      aria-label={`Copy ${what}`}
      title={state === 'failed' ? `Could not copy: ${value}` : `Copy ${what}: ${value}`}
      data-state={state}
      onClick={async (e) => {
        e.stopPropagation();
        setState((await copyText(value, what)) ? 'copied' : 'failed');
      }}
    >
      <span aria-hidden="true">{state === 'copied' ? '✓' : state === 'failed' ? '!' : '⧉'}</span>
    </button>
  );
}
