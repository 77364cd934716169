/**
 * The HTTP server: builds the Fastify app (routes, errors, request ids, OpenAPI) from its deps.
 * It does not listen by itself; main.ts (or a test) calls listen.
 */
import { randomUUID } from 'node:crypto';
import http, { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import secureJson from 'secure-json-parse';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { apiAuth } from './api-auth.js';
import { COVERED, checkPermission, neededFor } from './permissions.js';
import { withoutBasePath } from '../shared/base-path.js';
import type { App, HttpDeps } from './deps.js';
import { errorHandler, sendError } from './error-handler.js';
import { bodyIdleGuard } from './request-timeouts.js';
import { AuditLog } from '../audit/audit.js';
import { auditRoutes } from './routes/audit.js';
import { authRoutes } from './routes/auth.js';
import { credentialRoutes } from './routes/credentials.js';
import { oauth2AuthorizeRoute, oauth2CallbackRoute } from './routes/oauth2.js';
import { variableRoutes } from './routes/variables.js';
import { executionRoutes } from './routes/executions.js';
import { healthRoutes } from './routes/health.js';
import { memberRoutes } from './routes/members.js';
import { testListenerRoutes } from './routes/test-listener.js';
import { tokenRoutes } from './routes/tokens.js';
import { uiRoutes } from './routes/ui.js';
import { type RequestGate, type WebhookHandler, webhookHandler } from './routes/webhooks.js';
import { storeRoutes } from './routes/store.js';
import { workflowRoutes } from './routes/workflows.js';
import { workflowTestRoutes } from './routes/workflow-tests.js';
import { runNowRoutes } from './routes/run-now.js';

const API_BODY_LIMIT = 1024 * 1024;
// An incoming X-Request-Id is kept when it is short and plain (so a caller can correlate logs).
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Requests Node cannot even parse (bad framing, headers over 16 KiB, a slow client timing out)
 * never reach a route; they still get the SPEC error body, then the connection is closed.
 */
const clientErrorHandler = (http: Config['http']) => (err: NodeJS.ErrnoException, socket: Duplex) => {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const error =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large', 'The request headers (or URL) are too large.', {
          hint: 'Keep the URL and headers under 16 KiB together.',
        })
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout', 'The request was not received in time.', {
            hint: `Send the headers within ${http.headersTimeoutMs / 1000} seconds and the whole request within ${http.requestTimeoutMs / 1000} (HOOKFLOW_HEADERS_TIMEOUT, HOOKFLOW_REQUEST_TIMEOUT).`,
          })
        : new AppError(
            'invalid_body',
            'The request is not valid HTTP (framing, Content-Length or Transfer-Encoding).',
            { hint: 'Check the Content-Length and Transfer-Encoding headers.' },
          );
  const status = error.status;
  const body = JSON.stringify(error);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
};

/**
 * Once the server is closing, ends every connection as soon as no request is in progress on it.
 * Node closes only the connections idle at the moment it closes, and never counts one that has not
 * sent a request yet as idle (a browser's preconnect, a keep-alive client between requests): those,
 * and those whose request was still being answered, kept a stopping server up for their keep-alive
 * or headers timeout (up to 72 s). A request in progress is still answered and its execution run.
 */
function closeWhenIdle(server: http.Server, connections: Set<Socket>): void {
  const sweep = () => {
    // `_httpMessage` is the response in progress on a socket, as Node's own closeIdleConnections reads it.
    for (const socket of connections) {
      if (!(socket as Socket & { _httpMessage?: unknown })._httpMessage) socket.destroy();
    }
  };
  sweep();
  const timer = setInterval(sweep, 100).unref();
  server.once('close', () => clearInterval(timer));
}

/**
 * A cap on requests in progress: past it, answer 503 at once instead of queueing without bound
 * (each waiting request holds its body in memory). Long-polls and SSE streams count too. There are
 * two, each with HOOKFLOW_MAX_CONCURRENT_REQUESTS places: one for webhook calls, one for the Fastify
 * app (API, UI, docs, /metrics), so that a flood of either, or of uploads that stall, cannot starve
 * the other (with one gate, four stalled webhook bodies made the API, the UI and /healthz answer 503).
 * The probes /healthz and /readyz take no place at all: they cost nothing, and a load balancer that
 * saw them refused would take every instance out at once under the same flood. Both gates, and so
 * the webhook handler, answer 503 once the server is closing. A webhook call gives its place back
 * once it is stored: waiting for its execution (lastStep, respondStep) takes a place of the
 * waiter's own (webhooks/waiter.ts, HOOKFLOW_MAX_WAITING_RESPONSES) instead.
 */
function requestGate(maxConcurrentRequests: number): RequestGate & { close(): void } {
  let inFlight = 0;
  let closing = false;
  const overloaded = new AppError('overloaded', 'The server is handling too many requests right now.', {
    hint: 'Retry after the number of seconds in Retry-After.',
    headers: { 'retry-after': '1' },
  });
  const shuttingDown = new AppError(
    'overloaded',
    'The server is shutting down and accepts no new requests.',
    {
      hint: 'Retry in a few seconds; another instance or the restarted one will take it.',
      headers: { 'retry-after': '5', connection: 'close' },
    },
  );
  const leave = () => {
    inFlight--;
  };
  const admit = () => {
    if (closing) return shuttingDown;
    if (inFlight >= maxConcurrentRequests) return overloaded;
    inFlight++;
    return undefined;
  };
  return {
    requestId(given) {
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    closing() {
      return closing ? shuttingDown : undefined;
    },
    enter(res) {
      const refused = admit();
      if (refused === undefined) res.once('close', leave);
      return refused;
    },
    admit,
    leave,
    close() {
      closing = true;
    },
  };
}

/**
 * The docs page's CSP. Swagger UI runs only its own files (no inline script), sets element styles
 * from script (which style-src does not restrict), shows data: images, and "Try it out" calls the
 * API at HOOKFLOW_BASE_URL, which may be another origin than the one the page was opened on
 * (localhost vs 127.0.0.1). Its one inline <style> is in the Swagger logo's SVG, allowed by its
 * hash (test/e2e/api-docs.e2e.test.ts fails on any violation, e.g. after an upgrade changes it).
 */
const SWAGGER_LOGO_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";
function docsCsp(baseUrl: string): string {
  const api = new URL(baseUrl).origin;
  return (
    `default-src 'self'; script-src 'self'; script-src-attr 'none'; style-src 'self' ${SWAGGER_LOGO_STYLE}; ` +
    `img-src 'self' data:; font-src 'self' data:; connect-src 'self' ${api}; ` +
    `frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'`
  );
}

/** The probes: never refused by the cap (see requestGate). */
const PROBES = new Set(['/healthz', '/readyz', '/api/v1/healthz', '/api/v1/readyz']);

export async function createServer(deps: HttpDeps): Promise<App> {
  const { config, log } = deps;
  const gate = requestGate(config.http.maxConcurrentRequests);
  const webhookGate = requestGate(config.http.maxConcurrentRequests);
  // Webhook calls never enter Fastify: see routes/webhooks.ts for why.
  let webhooks: WebhookHandler | undefined;
  const connections = new Set<Socket>();
  const app = Fastify({
    loggerInstance: log,
    // No log line per request: the hot path stays quiet; errors are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.http.maxBodyBytes,
    genReqId: (req) => gate.requestId(req.headers['x-request-id']),
    serverFactory: (fastifyHandler) => {
      const basePath = config.http.basePath;
      const server = http.createServer(
        {
          // Slow clients may not hold a connection forever (slowloris): the head within
          // HOOKFLOW_HEADERS_TIMEOUT, the whole request within HOOKFLOW_REQUEST_TIMEOUT (a body that
          // falls silent: HOOKFLOW_BODY_TIMEOUT, request-timeouts.ts). Node checks these every
          // connectionsCheckingInterval, 30 s by default: a 60 s timeout fired after 60–90 s (70–81 s
          // measured). Each second, it is on time within a second; the check walks the
          // connections with a request in progress, cheap next to the requests themselves.
          headersTimeout: config.http.headersTimeoutMs,
          requestTimeout: config.http.requestTimeoutMs,
          connectionsCheckingInterval: 1_000,
        },
        (req, res) => {
          if (basePath !== '') req.url = withoutBasePath(req.url!, basePath);
          if (!webhooks?.(req, res)) fastifyHandler(req, res);
        },
      );
      // Known to closeWhenIdle (below) when the server stops.
      server.on('connection', (socket: Socket) => {
        connections.add(socket);
        socket.once('close', () => connections.delete(socket));
      });
      server.keepAliveTimeout = 72_000;
      server.setTimeout(0);
      return server;
    },
    return503OnClosing: true,
    // Off: the client's address comes from client-ip.ts (X-Forwarded-For believed only from the
    // proxies named in HOOKFLOW_TRUST_PROXY), the one rule for webhooks and the API alike.
    trustProxy: false,
    forceCloseConnections: 'idle',
    ajv: {
      customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false },
    },
    routerOptions: { maxParamLength: 1024, ignoreDuplicateSlashes: false },
    clientErrorHandler: clientErrorHandler(config.http),
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  // Responses are plain JSON.stringify: routes already build exactly what they mean to send, and
  // the schemas serve validation and the OpenAPI document.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.setErrorHandler(errorHandler(deps.health));
  app.setNotFoundHandler((req, reply) => {
    sendError(
      reply,
      new AppError('route_not_found', `There is nothing at ${req.method} ${req.url.split('?')[0]}.`, {
        hint: 'Webhook URLs start with /webhook/ or /webhook-test/; the API lives under /api/v1 (docs at /api/docs).',
      }),
    );
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done(PROBES.has(req.routeOptions.url ?? '') ? gate.closing() : gate.enter(reply.raw));
  });
  // A body still on its way is watched for silence (a body already in needs no watching).
  app.addHook('preParsing', (req, reply, payload, done) => {
    if (req.raw.complete || req.method === 'GET' || req.method === 'HEAD') return done(null, payload);
    done(null, bodyIdleGuard(payload, config.http.bodyTimeoutMs, reply.raw));
  });
  app.addHook('preClose', (done) => {
    gate.close();
    webhookGate.close();
    closeWhenIdle(app.server, connections);
    done();
  });

  // Every API route says which role it needs (permissions.ts): one without an entry stops start-up.
  app.addHook('onRoute', (route) => {
    if (!COVERED.test(route.url)) return;
    for (const method of [route.method].flat()) neededFor(method === 'HEAD' ? 'GET' : method, route.url);
  });

  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'hookflow API',
        version: '1',
        description: 'Management API of hookflow. Every call needs `Authorization: Bearer <API_TOKEN>`.',
      },
      servers: [{ url: config.http.baseUrl }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    },
  });
  // Behind a proxy that serves hookflow under a path, the docs page links its files under it too.
  // The docs page and its files get a CSP through the plugin's own staticCSP (it loads only its own
  // scripts and styles, no inline script), and nothing may frame them (clickjacking of "Try it out").
  await app.register(async (docs) => {
    docs.addHook('onRequest', async (_req, reply) => {
      reply.header('x-frame-options', 'DENY');
    });
    await docs.register(swaggerUi, {
      routePrefix: '/api/docs',
      indexPrefix: config.http.basePath,
      staticCSP: docsCsp(config.http.baseUrl),
    });
  });

  healthRoutes(app, deps);
  webhooks = webhookHandler(deps, webhookGate);
  uiRoutes(app, deps);
  oauth2CallbackRoute(app, deps);

  await app.register(
    async (api) => {
      const typed = api.withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
      // JSON bodies: an empty body counts as none (curl -H 'content-type: application/json' -X POST …/activate),
      // and __proto__ / constructor.prototype keys are dropped (the body is merged into stored objects).
      typed.removeContentTypeParser('application/json');
      typed.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
        if (typeof text !== 'string' || text.trim() === '') return done(null, undefined);
        try {
          done(
            null,
            secureJson.parse(text, undefined, { protoAction: 'remove', constructorAction: 'remove' }),
          );
        } catch {
          done(
            new AppError('invalid_body', 'The request body is not valid JSON.', {
              hint: 'Check the JSON syntax (quotes, commas, brackets) and send it again.',
            }),
          );
        }
      });
      typed.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      authRoutes(typed, deps);
      typed.register(async (secured) => {
        secured.addHook('onRequest', apiAuth(deps.tokens, deps.accounts));
        secured.addHook('onRequest', checkPermission);
        const s = secured as unknown as App;
        workflowRoutes(s, deps);
        workflowTestRoutes(s, deps);
        runNowRoutes(s, deps);
        tokenRoutes(s, deps);
        executionRoutes(s, deps);
        testListenerRoutes(s, deps);
        credentialRoutes(s, deps);
        oauth2AuthorizeRoute(s, deps);
        variableRoutes(s, deps);
        memberRoutes(s, deps);
        storeRoutes(s, deps);
        // Reads only: the rows are written by the services that make the changes.
        auditRoutes(s, new AuditLog({ store: deps.store, maxAgeMs: config.audit.maxAgeMs }));
      });
    },
    { prefix: '/api/v1', bodyLimit: API_BODY_LIMIT } as { prefix: string },
  );

  return app;
}
