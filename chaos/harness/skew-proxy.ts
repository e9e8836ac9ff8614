/**
 * Clock-rate skew, modelled in the network. A node whose clock runs fast by a rate ρ expires a
 * key set with PX ttl after ttl / (1 + ρ) of real time. This proxy gives a node exactly that
 * behaviour for the lock core's leases: it shortens the ttl of the grant (the PX of SET … NX …, and
 * ARGV[2] of the acquire and extend scripts) by floor(ttl × ρ) on its way to the node. Everything
 * else passes unchanged.
 * (One host has one clock, so real drift cannot be produced between local processes.)
 */
import { CommandProxy, scriptShaOf } from './command-proxy';

export interface SkewProxyOptions {
  targetPort: number;
  /** SHA1s of the scripts whose ARGV[2] is a lease ttl (acquire and extend). */
  leaseScriptShas: readonly string[];
}

export class SkewProxy extends CommandProxy {
  /** Fraction by which this node's clock runs fast; 0 passes leases unchanged. */
  rate = 0;
  /** Leases shortened so far. */
  rewritten = 0;
  private readonly shas: Set<string>;

  constructor(options: SkewProxyOptions) {
    super(options.targetPort);
    this.shas = new Set(options.leaseScriptShas.map((s) => s.toLowerCase()));
  }

  protected forward(args: Buffer[]): Buffer[] {
    return this.rewrite(args) ?? args;
  }

  /** The command with its lease shortened, or null to pass it unchanged. */
  private rewrite(args: Buffer[]): Buffer[] | null {
    if (this.rate <= 0 || args.length < 3) return null;
    const name = args[0]!.toString('latin1').toLowerCase();
    let ttlIndex: number;
    if (name === 'set') {
      // The single-resource grant: SET <lock> '<token> <metadata>' NX GET PX <ttl> (a fence or extend
      // rewrite of the value is a SETRANGE inside a script).
      const words = args.map((a) => a.toString('latin1').toLowerCase());
      if (!words.includes('nx')) return null;
      ttlIndex = words.indexOf('px', 3) + 1;
      if (ttlIndex === 0) return null;
    } else {
      const sha = scriptShaOf(args);
      if (sha === null || !this.shas.has(sha)) return null;
      ttlIndex = 3 + Number(args[2]!.toString('latin1')) + 1;
    }
    const ttl = Number(args[ttlIndex]?.toString('latin1'));
    if (!Number.isInteger(ttl) || ttl <= 0) return null;
    const out = args.slice();
    out[ttlIndex] = Buffer.from(String(Math.max(1, ttl - Math.floor(ttl * this.rate))), 'latin1');
    this.rewritten++;
    return out;
  }
}
