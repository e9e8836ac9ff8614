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
      {state === 'idle' ? (
        <svg aria-hidden="true" width="13" height="13" viewBox="0 0 16 16" fill="none" stroke="currentColor" strokeWidth="1.6">
          <rect x="5.5" y="5.5" width="8" height="8" rx="1.5" />
          <path d="M10.5 3.5v-1a1 1 0 0 0-1-1h-6a1 1 0 0 0-1 1v6a1 1 0 0 0 1 1h1" />
        </svg>
      ) : (
        <span aria-hidden="true">{state === 'copied' ? '✓' : '!'}</span>
      )}
    </button>
  );
}
