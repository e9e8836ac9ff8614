export declare const SAFETY_TS: readonly string[];
