// The load hook of count-server-modules.mjs (runs on Node's loader thread): reports the URL of each
// module of lib/server that Node loads.
let port;

export function initialize(data) {
  port = data.port;
}

export async function load(url, context, nextLoad) {
  if (url.includes('/lib/server/') && !url.includes('/node_modules/')) port.postMessage(url);
  return nextLoad(url, context);
}
