// Stand-in for the 'server-only' marker package: in Next.js it forbids client bundles from
// importing server modules; under vitest there is no client bundle to protect.
export {};
