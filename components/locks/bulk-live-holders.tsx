import type { ForceReleaseResponse } from '@/lib/api/locks';

/** The holders in a batch that are alive (extending now): what releasing them means, and the box that says "anyway". */
export function BulkLiveHolders({
  live,
  confirmed,
  onConfirm,
  disabled,
}: {
  live: ForceReleaseResponse[];
  confirmed: boolean;
  onConfirm: (confirmed: boolean) => void;
  disabled: boolean;
}) {
  return (
    <div className="callout callout-bad" role="alert" data-testid="bulk-live-holders">
      <p>
        <strong>
          {live.length} of these holders {live.length === 1 ? 'is' : 'are'} alive
        </strong>{' '}
        (extending now: {live.map((r) => r.resource).join(', ')}). A live holder learns it lost its lock only at its next extend or check;
        until then it goes on as if it held it, while another client may take it. Prefer stopping the holders.
      </p>
      <label>
        <input
          type="checkbox"
          checked={confirmed}
          onChange={(e) => onConfirm(e.target.checked)}
          disabled={disabled}
          data-testid="bulk-confirm-live"
        />{' '}
        {live.length === 1 ? 'The holder is alive' : 'These holders are alive'} and I release anyway
      </label>
    </div>
  );
}
