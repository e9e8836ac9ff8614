import { appendFileSync, writeFileSync } from 'node:fs';
import type { ClientEvent } from './history';

/**
 * A client process's event log: kept in memory and appended to a JSONL file every `flushMs` and
 * on close, so a process that dies mid-phase leaves all but its last moments behind.
 */
export class EventLog {
  private buffer: string[] = [];
  private count = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly path: string,
    flushMs = 500,
  ) {
    writeFileSync(path, '');
    this.timer = setInterval(() => this.flush(), flushMs);
    this.timer.unref();
  }

  push(event: ClientEvent): void {
    this.buffer.push(JSON.stringify(event));
    this.count++;
  }

  get size(): number {
    return this.count;
  }

  flush(): void {
    if (this.buffer.length === 0) return;
    appendFileSync(this.path, this.buffer.join('\n') + '\n');
    this.buffer = [];
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}

/** Read a JSONL file of records (skipping a torn last line). */
export function parseJsonLines<T>(text: string): T[] {
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // a line torn by a killed process
    }
  }
  return out;
}
