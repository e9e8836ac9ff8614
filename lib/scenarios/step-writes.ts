/**
 * The steps that write to the two stores the clients share (registers.ts: a plain one and one that
 * checks fences): a write now (`write`), and a write the network holds (simulated) from
 * `send-write` until `deliver-write` hands it to the stores.
 */
import { lockId, type StepContext } from './context';
import { seconds } from './record';
import type { StepOf } from './script';

/** A fence as the log names it: its last four digits, or none. */
function fenceText(fence: number | null): string {
  return fence === null ? 'none' : `…${String(fence).slice(-4)}`;
}

export function write(ctx: StepContext, step: StepOf<'write'>): string {
  const lock = ctx.locks.get(lockId(step.who, step.resource));
  const fence = lock?.fence ?? null;
  const w = ctx.record.write({ t: ctx.now(), client: step.who, resource: step.resource, fence, value: step.value });
  ctx.record.mark(w.t, 'write', `${step.who} writes ${step.value}`, { client: step.who });
  const text = `${step.who} writes "${step.value}" with fence ${fenceText(fence)}: plain store accepted, fenced store ${w.fenced} (${w.reason})`;
  ctx.record.say(w.t, text, w.fenced === 'accepted' ? 'ok' : 'bad');
  if (step.reveals) {
    const actual = w.fenced === 'accepted' ? 'both' : 'unfenced-only';
    ctx.reveal(step.reveals, actual, step.explain?.[actual]);
  }
  return text;
}

/** The client sends a write with the fence it holds now; the network holds it (simulated) until `deliver-write`. */
export function sendWrite(ctx: StepContext, step: StepOf<'send-write'>): string {
  const fence = ctx.locks.get(lockId(step.who, step.resource))?.fence ?? null;
  const t = ctx.now();
  ctx.inFlight.set(step.id, { client: step.who, resource: step.resource, fence, value: step.value, sentAt: t });
  ctx.record.mark(t, 'send', `${step.who} sends ${step.value}`, { client: step.who });
  const text = `${step.who} sends "${step.value}" with fence ${fenceText(fence)}; the network holds it (simulated)`;
  ctx.record.say(t, text, 'muted');
  return text;
}

/** The held write arrives at both stores now, with the fence it was sent with. */
export function deliverWrite(ctx: StepContext, step: StepOf<'deliver-write'>): string {
  const sent = ctx.inFlight.get(step.sent);
  if (!sent) throw new Error(`deliver-write: no write was sent by step ${step.sent}`);
  ctx.inFlight.delete(step.sent);
  const kept = [...ctx.record.writes].reverse().find((w) => w.client === step.keeps && w.resource === sent.resource)?.value ?? null;
  const t = ctx.now();
  const w = ctx.record.write({ t, client: sent.client, resource: sent.resource, fence: sent.fence, value: sent.value });
  ctx.record.mark(t, 'write', `${sent.client}'s write arrives`, { client: sent.client });
  ctx.record.fact('write-delay', 'Write held in the network (simulated)', seconds(t - sent.sentAt));
  const text = `${sent.client}'s write "${sent.value}" arrives ${seconds(t - sent.sentAt)} after it was sent: plain store accepted, fenced store ${w.fenced} (${w.reason})`;
  ctx.record.say(t, text, w.fenced === 'accepted' ? 'ok' : 'bad');
  const answer = (value: string | null) => (kept !== null && value === kept ? 'yes' : 'no');
  if (step.revealsPlain) {
    const actual = answer(ctx.record.plain.value);
    ctx.reveal(step.revealsPlain, actual, step.explain?.[`plain-${actual}`]);
  }
  if (step.revealsFenced) {
    const actual = answer(ctx.record.fenced.value);
    ctx.reveal(step.revealsFenced, actual, step.explain?.[`fenced-${actual}`]);
  }
  return text;
}
