import { AUDIT_CSV_COLUMNS, type AuditEntry } from '../../lib/api/audit';

/**
 * The reader of the console's audit CSV export (lib/server/audit-csv.ts writes it): the tests read
 * an export back to check that it round-trips, formulas neutralised and quoting undone. Test
 * tooling: the product only writes the format.
 */
/** Parse what auditToCsv wrote. */
export function auditFromCsv(text: string): AuditEntry[] {
  const records = parseCsv(text);
  const [header, ...rows] = records;
  if (!header || header.join(',') !== AUDIT_CSV_COLUMNS.join(',')) throw new Error('not an audit CSV export');
  return rows.map((row) => {
    const get = (i: number) => unformula(row[i] ?? '');
    return {
      id: get(0),
      at: Date.parse(get(1)),
      actor: get(2),
      role: get(3),
      action: get(4),
      target: get(5),
      reason: get(6),
      outcome: get(7),
      before: get(8) ? JSON.parse(get(8)) : null,
      after: get(9) ? JSON.parse(get(9)) : null,
      detail: get(10),
      ...(get(11) ? { holder: get(11) } : {}),
      ...(get(12) ? { via: JSON.parse(get(12)) as AuditEntry['via'] } : {}),
    };
  });
}

function unformula(value: string): string {
  return /^'[=+\-@\t\r]/.test(value) ? value.slice(1) : value;
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      if (c === '\r') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
