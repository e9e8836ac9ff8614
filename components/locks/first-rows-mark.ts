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
