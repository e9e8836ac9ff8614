export declare const SAFETY_TS: readonly string[];
export declare const SAFETY_TS_QUICK: readonly string[];
