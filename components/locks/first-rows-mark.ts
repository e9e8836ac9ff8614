'use client';

import { useEffect, useRef } from 'react';

/** Marks `locks:first-rows` in the frame that paints the first rows: e2e reads it (time from navigation start to first rows). */
export function useFirstRowsMark(rowCount: number) {
  const firstRowsMarked = useRef(false);
  useEffect(() => {
    if (!firstRowsMarked.current && rowCount > 0) {
      firstRowsMarked.current = true;
      requestAnimationFrame(() => performance.mark('locks:first-rows'));
    }
  }, [rowCount]);
}

/** Calls `call` once `settled` is true (again if `call` changes): the matrix's first page has answered. */
export function useSettledCall(settled: boolean, call: (() => void) | undefined) {
  useEffect(() => {
    if (settled) call?.();
  }, [settled, call]);
}
