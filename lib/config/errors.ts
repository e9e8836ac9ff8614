/** A bad setting: `message` is one line naming the variable, what is wrong and how to fix it. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError' as const;
}
