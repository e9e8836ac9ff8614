/** Formatting of chaos report figures. */
export function count(value: number): string {
  return value.toLocaleString('en-US');
}

export function ms(value: number | null, digits = 1): string {
  if (value === null) return '—';
  return value.toLocaleString('en-US', { maximumFractionDigits: value >= 100 ? 0 : digits });
}

export function duration(totalMs: number): string {
  const s = Math.round(totalMs / 1000);
  if (s < 60) return `${s} s`;
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** `LockContendedError` → `LockContended`. */
export function errorLabel(name: string): string {
  return name.endsWith('Error') ? name.slice(0, -'Error'.length) : name;
}
