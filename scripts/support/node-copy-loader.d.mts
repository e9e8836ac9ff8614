/** The Turbopack loader of node-copy-loader.mjs: the shim that stands for one module of lib/server. */
export default function nodeCopyLoader(this: { resourcePath: string }, source: string): string;
