/**
 * A node that stops answering in the middle of a lock operation: on every connection, the first
 * command that runs one of the armed scripts is held back, with everything sent after it on that
 * connection; the commands before it pass. release() ends the held connections, so what they held
 * never reaches the node (a stall that ends in a reset). The fence-stall trial arms it with the
 * fence script: the victim votes for a grant and then never confirms its fence.
 */
import { CommandProxy, scriptShaOf, type ProxiedConnection } from './command-proxy';

export class StallProxy extends CommandProxy {
  private shas = new Set<string>();
  private readonly held = new Set<ProxiedConnection>();
  /** Commands held back so far (the first of each held connection). */
  stalled = 0;

  /** Hold back, from now on, the first command running one of these scripts on each connection. */
  arm(shas: readonly string[]): void {
    this.shas = new Set(shas.map((s) => s.toLowerCase()));
  }

  /** Stop holding new connections back and end the held ones (their held commands are dropped). */
  release(): void {
    this.shas = new Set();
    for (const c of [...this.held]) c.end();
  }

  protected forward(args: Buffer[], connection: ProxiedConnection): Buffer[] | null {
    if (this.held.has(connection)) return null;
    if (this.shas.size > 0) {
      const sha = scriptShaOf(args);
      if (sha !== null && this.shas.has(sha)) {
        this.held.add(connection);
        this.stalled++;
        return null;
      }
    }
    return args;
  }

  protected override ended(connection: ProxiedConnection): void {
    this.held.delete(connection);
  }
}
