import { z } from 'zod';
import { apiErrorSchema } from './common';
import { API_ROUTES, API_TAGS, type ApiRoute } from './routes';

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route list (routes.ts) and the zod
 * schemas of lib/api (zod 4's JSON Schema output is draft 2020-12, OpenAPI 3.1's dialect).
 * Requests are described as the schemas accept them (`io: 'input'`: defaults optional), answers as
 * the server sends them. Served at GET /api/openapi.json.
 */
type JsonSchema = Record<string, unknown>;

/** The outline of what GET /api/openapi.json answers (the document itself is checked by api-openapi.test.ts). */
export const openApiDocumentSchema = z.object({
  openapi: z.literal('3.1.0'),
  info: z.object({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
});

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  delete json.$schema;
  return json;
}

/** The properties of an object schema as OpenAPI parameters (path or query). */
function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query'): unknown[] {
  if (!schema) return [];
  const json = schemaOf(schema, 'input');
  const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    ...(typeof property.description === 'string' ? { description: property.description } : {}),
    schema: property,
  }));
}

const SECURITY: Record<ApiRoute['access'], Array<Record<string, string[]>>> = {
  anyone: [],
  viewer: [{ session: [] }],
  operator: [{ session: [] }],
  'client or operator': [{ apiKey: [] }, { session: [] }],
  'viewer or scrape token': [{ scrapeToken: [] }, { session: [] }],
};

function operationOf(route: ApiRoute): Record<string, unknown> {
  const error = {
    description: 'An error: 4xx for what the client can fix, 503 without a quorum',
    content: { 'application/json': { schema: schemaOf(apiErrorSchema, 'output') } },
  };
  return {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    summary: route.summary,
    description: [
      route.description,
      `Who may call it: ${route.access}.`,
      route.access === 'operator' || route.access === 'client or operator'
        ? 'A session cookie must also send the x-csrf-token header (GET /api/auth/me) and a same-origin Origin.'
        : null,
    ]
      .filter(Boolean)
      .join(' '),
    tags: [route.tag],
    security: SECURITY[route.access],
    parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')],
    ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(route.body, 'input') } } } } : {}),
    responses: {
      '200': route.response
        ? { description: 'OK', content: { 'application/json': { schema: schemaOf(route.response, 'output') } } }
        : { description: 'OK', content: { [route.produces ?? 'application/octet-stream']: {} } },
      default: error,
    },
  };
}

export function openApiDocument(options: { version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of API_ROUTES) (paths[route.path] ??= {})[route.method.toLowerCase()] = operationOf(route);
  return {
    openapi: '3.1.0',
    info: {
      title: 'redlock-console HTTP API',
      version: options.version,
      description:
        'The lock service (acquire, extend, release over Redlock on independent Redis masters, with fencing tokens) and the console API (cross-node inspection, force-release, node actions, audit, metrics, events).',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(API_ROUTES.map((r) => r.tag))].map((name) => ({ name, description: API_TAGS[name] })),
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (REDLOCK_API_KEYS): role client, the lock service only' },
        session: { type: 'apiKey', in: 'cookie', name: 'rl_session', description: 'The console session (POST /api/auth/login)' },
        scrapeToken: { type: 'http', scheme: 'bearer', description: 'The metrics scrape token (REDLOCK_METRICS_TOKEN)' },
      },
    },
    paths,
  };
}
