/** A page cursor that this module did not make (or that was altered). */
export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError' as const;
  constructor(readonly cursor: string) {
    super('the cursor is not one this server gave out: start again without a cursor');
  }
}
