import { AUDIT_CSV_COLUMNS, type AuditEntry } from '../api/audit';

/**
 * RFC 4180 CSV of audit entries; `at` as ISO 8601 UTC, before/after as JSON. A machine format on
 * purpose: the console's human format (components/ui/format.ts, local time with its offset) is for
 * screens only, never for exports.
 */
export function auditToCsv(entries: AuditEntry[]): string {
  const rows = entries.map((e) =>
    AUDIT_CSV_COLUMNS.map((column) => {
      const value = e[column];
      if (column === 'at') return new Date(value as number).toISOString();
      if (column === 'before' || column === 'after' || column === 'via')
        return value === null || value === undefined ? '' : JSON.stringify(value);
      if (value === undefined) return '';
      return String(value);
    }),
  );
  return [AUDIT_CSV_COLUMNS as readonly string[], ...rows].map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}

function csvField(value: string): string {
  // Quote everything that needs it; neutralise spreadsheet formulas (=, +, -, @ at the start).
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n']/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
