export declare const GROUPS: ReadonlyArray<{ name: string; files: readonly string[]; tests: readonly string[] }>;
