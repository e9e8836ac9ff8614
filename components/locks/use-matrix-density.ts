'use client';

import { PHONE_QUERY, useMediaQuery } from '../ui/use-media-query';
import { useStoredChoice } from '../ui/use-stored-choice';
import { DENSITIES, type Density } from './matrix-toolbar';

const ROW_HEIGHT = 56;
/** A row as a stacked card on phones (lock-matrix.module.css, its narrow block). */
const PHONE_ROW_HEIGHT = 112;
/** A row in the compact density (lock-matrix.module.css, `.compact`). */
const COMPACT_ROW_HEIGHT = 36;

/** How the matrix lays its rows out: stacked cards on a phone, else the stored density (compact or comfortable), and their height. */
export function useMatrixDensity() {
  const phone = useMediaQuery(PHONE_QUERY);
  const [density, setDensity] = useStoredChoice<Density>('locks.density', DENSITIES, 'comfortable');
  const compact = density === 'compact' && !phone;
  const rowHeight = phone ? PHONE_ROW_HEIGHT : compact ? COMPACT_ROW_HEIGHT : ROW_HEIGHT;
  return { phone, density, setDensity, compact, rowHeight };
}
