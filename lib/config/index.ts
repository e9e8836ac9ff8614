export { loadConfig, CONFIG_DEFAULTS, type Config } from './env';
export { ConfigError } from './errors';
export { parseNodeUrls, redact, type NodeEndpoint } from './node-urls';
export { ensureOperatorLogin, credentialsFile, type OperatorLogin } from './credentials';
export { clientAddress, normalizeAddress, parseTrustProxy, type TrustProxy } from './trust-proxy';
