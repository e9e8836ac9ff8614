import { z } from 'zod';
import { meSchema } from './auth';
import { apiErrorSchema } from './common';
import {
  acquireBodySchema,
  extendBodySchema,
  extendResponseSchema,
  lockGrantSchema,
  releaseBodySchema,
  releaseResponseSchema,
} from './locks';
import { ERROR_STATUS_MEANING, errorAnswersOf, type ErrorStatus } from './route-errors';
import { API_ROUTES, API_TAGS, type ApiRoute } from './routes';
import { runResponseSchema } from './scenarios';

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route list (routes.ts) and the zod
 * schemas of lib/api (zod 4's JSON Schema output is draft 2020-12, OpenAPI 3.1's dialect).
 * Requests are described as the schemas accept them (`io: 'input'`: defaults optional), answers as
 * the server sends them. Every operation declares its error answers (route-errors.ts), each body
 * the one `ApiError` schema of components.schemas; request `ttlMs` is bounded by the lease ceiling.
 * Served at GET /api/openapi.json; test/unit/openapi-lint.test.ts lints it with Redocly and compiles
 * a client generated from it by openapi-typescript.
 */
type JsonSchema = Record<string, unknown>;

/** The outline of what GET /api/openapi.json answers (the document itself is checked by api-openapi.test.ts). */
export const openApiDocumentSchema = z.object({
  openapi: z.literal('3.1.0'),
  info: z.object({ title: z.string(), version: z.string() }),
  paths: z.record(z.string(), z.record(z.string(), z.unknown())),
});

/**
 * The request and answer schemas the document names in `components.schemas` (a generated client's
 * type names); every other body and answer is named after its operation (`PostApiLocksRequest`…).
 */
const NAMED_SCHEMAS: ReadonlyArray<readonly [z.ZodType, 'input' | 'output', string]> = [
  [apiErrorSchema, 'output', 'ApiError'],
  [acquireBodySchema, 'input', 'AcquireRequest'],
  [lockGrantSchema, 'output', 'LockGrant'],
  [extendBodySchema, 'input', 'ExtendRequest'],
  [extendResponseSchema, 'output', 'ExtendResponse'],
  [releaseBodySchema, 'input', 'ReleaseRequest'],
  [releaseResponseSchema, 'output', 'ReleaseResponse'],
  [meSchema, 'output', 'Me'],
  [runResponseSchema, 'output', 'ScenarioRun'],
];

interface DocumentOptions {
  version: string;
  /** The lease ceiling (REDLOCK_MAX_TTL_MS): every request's `ttlMs` maximum. */
  maxTtlMs: number;
}

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  return tidy(z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema) as JsonSchema;
}

/**
 * zod's JSON Schema as OpenAPI linters read it: no `$schema` inside the document; a nullable
 * unknown (`anyOf: [{}, null]`) is just `{}`; a record over an enum of keys (every key present)
 * names its properties.
 */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) if (key !== '$schema') out[key] = tidy(value);
  const anyOf = out.anyOf as JsonSchema[] | undefined;
  if (anyOf?.some((s) => Object.keys(s).length === 0)) delete out.anyOf;
  const keys = (out.propertyNames as JsonSchema | undefined)?.enum as string[] | undefined;
  if (out.type === 'object' && keys && !out.properties && typeof out.additionalProperties === 'object') {
    out.properties = Object.fromEntries(keys.map((k) => [k, out.additionalProperties]));
    out.additionalProperties = false;
    delete out.propertyNames;
  }
  return out;
}

/** Every `ttlMs` of a request body at most the lease ceiling (the core refuses more: 400 INVALID_ARGUMENT). */
function withTtlCeiling(schema: JsonSchema, maxTtlMs: number): JsonSchema {
  const ttl = (schema.properties as Record<string, JsonSchema> | undefined)?.ttlMs;
  if (ttl) ttl.maximum = maxTtlMs;
  return schema;
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

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The document being built: components.schemas filled as operations name their schemas. */
class Builder {
  readonly schemas: Record<string, JsonSchema> = {};
  private readonly names = new Map<z.ZodType, Map<'input' | 'output', string>>();

  constructor(private readonly maxTtlMs: number) {
    for (const [schema, io, name] of NAMED_SCHEMAS) this.nameOf(schema, io, name);
  }

  /** `schema` in components.schemas (once, under its first name), as a reference. */
  nameOf(schema: z.ZodType, io: 'input' | 'output', fallback: string): { $ref: string } {
    const byIo = this.names.get(schema) ?? new Map<'input' | 'output', string>();
    this.names.set(schema, byIo);
    let name = byIo.get(io);
    if (!name) {
      name = fallback;
      byIo.set(io, name);
      const json = schemaOf(schema, io);
      this.schemas[name] = io === 'input' ? withTtlCeiling(json, this.maxTtlMs) : json;
    }
    return ref(name);
  }

  operation(route: ApiRoute): Record<string, unknown> {
    const operationId = `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ''))}`;
    const typeName = operationId[0]!.toUpperCase() + operationId.slice(1);
    const ok = route.response
      ? { description: 'OK', content: { 'application/json': { schema: this.nameOf(route.response, 'output', `${typeName}Response`) } } }
      : { description: 'OK', content: { [route.produces ?? 'application/octet-stream']: {} } };
    const responses: Record<string, unknown> = { '200': ok };
    for (const [status, answer] of Object.entries(errorAnswersOf(route))) {
      const codes = answer.codes.length > 0 ? ` (error.code ${answer.codes.join(', ')})` : '';
      responses[status] = {
        description: `${ERROR_STATUS_MEANING[Number(status) as ErrorStatus]}${codes}`,
        ...(status === '429'
          ? { headers: { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } } } }
          : {}),
        content: answer.sameAsOk ? ok.content : { 'application/json': { schema: ref('ApiError') } },
      };
    }
    responses.default = {
      description: 'A bug (500 INTERNAL, logged on the server)',
      content: { 'application/json': { schema: ref('ApiError') } },
    };
    return {
      operationId,
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
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: this.nameOf(route.body, 'input', `${typeName}Request`) } },
            },
          }
        : {}),
      responses,
    };
  }
}

export function openApiDocument(options: DocumentOptions): Record<string, unknown> {
  const builder = new Builder(options.maxTtlMs);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of API_ROUTES) (paths[route.path] ??= {})[route.method.toLowerCase()] = builder.operation(route);
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
      schemas: builder.schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key (REDLOCK_API_KEYS): role client, the lock service only' },
        session: { type: 'apiKey', in: 'cookie', name: 'rl_session', description: 'The console session (POST /api/auth/login)' },
        scrapeToken: { type: 'http', scheme: 'bearer', description: 'The metrics scrape token (REDLOCK_METRICS_TOKEN)' },
      },
    },
    paths,
  };
}
