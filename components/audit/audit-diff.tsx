import { fieldLabel, isRecord, show, showField } from './audit-fields';
import styles from './audit.module.css';

type Row = Record<string, unknown>;

const perNode = (v: unknown): v is Row[] => Array.isArray(v) && v.every((x) => isRecord(x) && typeof x.node === 'number');

/** Fields worth a column: every key in either side, `node` first, in a stable order. */
function keysOf(...rows: Array<Row | undefined>): string[] {
  const keys = new Set<string>();
  for (const r of rows) if (r) for (const k of Object.keys(r)) if (k !== 'node') keys.add(k);
  return [...keys];
}

/**
 * Before and after of an audited action. Per-node arrays (force-release) become one row per node;
 * a single snapshot (node actions) becomes one row per field; changed values are highlighted.
 */
export function AuditDiff({ before, after }: { before: unknown; after: unknown }) {
  if (before === null && after === null)
    return <p className={styles.muted}>This action changes no node state (nothing before or after was recorded).</p>;

  if ((before === null || perNode(before)) && (after === null || perNode(after))) {
    const b = (before ?? []) as Row[];
    const a = (after ?? []) as Row[];
    const ids = [...new Set([...b, ...a].map((r) => r.node as number))].sort((x, y) => x - y);
    const fields = keysOf(...b, ...a);
    return (
      <table className={styles.diff} data-testid="audit-diff" data-shape="per-node">
        <thead>
          <tr>
            <th scope="col">Node</th>
            {fields.map((f) => (
              <th key={f} scope="col" title={f}>
                {fieldLabel(f)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {ids.map((id) => {
            const rb = b.find((r) => r.node === id);
            const ra = a.find((r) => r.node === id);
            return (
              <tr key={id}>
                <th scope="row">node {id}</th>
                {fields.map((f) => {
                  const vb = rb?.[f];
                  const va = ra?.[f];
                  const changed = rb !== undefined && ra !== undefined && f in rb && f in ra && show(vb) !== show(va);
                  const sb = showField(f, vb);
                  const sa = showField(f, va);
                  return (
                    <td key={f} className={changed ? styles.changed : undefined}>
                      {rb && ra && f in rb && f in ra ? (
                        changed ? (
                          <>
                            <span className={styles.was}>{sb}</span> → <span className={styles.now}>{sa}</span>
                          </>
                        ) : (
                          sa
                        )
                      ) : (
                        showField(f, ra?.[f] ?? rb?.[f])
                      )}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </table>
    );
  }

  if ((before === null || isRecord(before)) && (after === null || isRecord(after))) {
    const b = (before ?? undefined) as Row | undefined;
    const a = (after ?? undefined) as Row | undefined;
    const fields = [...new Set([...Object.keys(b ?? {}), ...Object.keys(a ?? {})])];
    return (
      <table className={styles.diff} data-testid="audit-diff" data-shape="fields">
        <thead>
          <tr>
            <th scope="col">Field</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {fields.map((f) => {
            const vb = b ? showField(f, b[f]) : '—';
            const va = a ? showField(f, a[f]) : '—';
            const changed = b !== undefined && a !== undefined && vb !== va;
            return (
              <tr key={f} className={changed ? styles.changedRow : undefined}>
                <th scope="row" title={f}>
                  {fieldLabel(f)}
                </th>
                <td className={changed ? styles.was : undefined}>{b ? vb : <span className={styles.muted}>not recorded</span>}</td>
                <td className={changed ? styles.now : undefined}>{a ? va : <span className={styles.muted}>not recorded</span>}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    );
  }

  return (
    <div className={styles.rawPair} data-testid="audit-diff" data-shape="raw">
      <div>
        <h3>Before</h3>
        <pre>{JSON.stringify(before, null, 2)}</pre>
      </div>
      <div>
        <h3>After</h3>
        <pre>{JSON.stringify(after, null, 2)}</pre>
      </div>
    </div>
  );
}
