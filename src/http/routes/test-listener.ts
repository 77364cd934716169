import Type from 'typebox';
import { decodeCursor } from '../../ids.js';
import { MAX_LISTEN_SECONDS } from '../../webhooks/test-listener.js';
import type { App, HttpDeps } from '../deps.js';
import { errors, IdParams, PageQuery, pageOf, routeSchema } from '../schemas.js';

const ListenerSchema = Type.Object({
  listenerId: Type.String(),
  expiresAt: Type.String(),
  testUrl: Type.String(),
  keepListening: Type.Boolean(),
});

const TestEventSchema = Type.Object({
  id: Type.String(),
  executionId: Type.Union([Type.String(), Type.Null()]),
  receivedAt: Type.String(),
  item: Type.Unknown(),
});

// SSE comments every 15 s keep proxies from closing an idle stream and reveal dead clients.
const HEARTBEAT_MS = 15_000;

export function testListenerRoutes(app: App, { listeners, workflows }: HttpDeps): void {
  const tags = ['test listening'];
  // Open event streams never end on their own (heartbeats keep them alive), so a shutdown ends
  // them; the client (UI, `hookflow listen`) reconnects to the next server.
  const streams = new Set<NodeJS.WritableStream & { end(): unknown }>();
  app.addHook('preClose', (done) => {
    for (const res of streams) res.end();
    done();
  });

  app.post(
    '/workflows/:id/test-listener',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        body: Type.Object(
          {
            timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LISTEN_SECONDS })),
            keepListening: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 201: ListenerSchema, ...errors(400, 401, 404, 409) },
      }),
      // SPEC 8: no body (`curl -X POST …/test-listener`, as the README does) takes the defaults.
      // Fastify validates a missing body against the schema as `undefined` ("/ must be object"),
      // whatever Type.Optional says, so it becomes {} before validation.
      preValidation: (req, _reply, done) => {
        req.body ??= {};
        done();
      },
    },
    async (req, reply) => reply.code(201).send(await listeners.open(req.params.id, req.body)),
  );

  app.get(
    '/workflows/:id/test-listener',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        response: {
          200: Type.Object({
            listening: Type.Boolean(),
            listener: Type.Union([ListenerSchema, Type.Null()]),
          }),
          ...errors(401, 404),
        },
      }),
    },
    async (req) => {
      const listener = await listeners.current(req.params.id);
      return { listening: listener !== undefined, listener: listener ?? null };
    },
  );

  app.delete(
    '/workflows/:id/test-listener',
    { schema: routeSchema(tags, { params: IdParams, response: { 204: Type.Null(), ...errors(401, 404) } }) },
    async (req, reply) => {
      await listeners.close(req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/workflows/:id/test-events',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        querystring: Type.Intersect([
          PageQuery,
          Type.Object({
            waitSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_LISTEN_SECONDS })),
            after: Type.Optional(Type.String({ maxLength: 64 })),
          }),
        ]),
        response: { 200: pageOf(TestEventSchema), ...errors(400, 401, 404) },
      }),
    },
    async (req, reply) => {
      const { id } = req.params;
      const { limit = 20, cursor, waitSeconds, after } = req.query;
      const before = decodeCursor(cursor);
      let page = await listeners.events(id, limit, before);
      // Long-poll: wait for a capture newer than `after` (or newer than the request, without it).
      const newest = page.items[0]?.id;
      const haveNewer = after !== undefined && newest !== undefined && newest > after;
      if (waitSeconds && !before && !haveNewer) {
        const abort = new AbortController();
        reply.raw.once('close', () => abort.abort());
        const captured = await listeners.waitForNext(id, waitSeconds * 1000, abort.signal);
        if (captured) page = await listeners.events(id, limit, undefined);
      }
      return page;
    },
  );

  app.get(
    '/workflows/:id/test-events/stream',
    { schema: routeSchema(tags, { params: IdParams, produces: ['text/event-stream'] }) },
    async (req, reply) => {
      const { id } = req.params;
      await workflows.get(id); // 404 before the stream opens
      const listener = await listeners.current(id);
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': String(req.id),
      });
      const send = (event: string, data: unknown, eventId?: string) =>
        res.write(`${eventId ? `id: ${eventId}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      res.write('retry: 3000\n\n');
      send('listening', { listening: listener !== undefined, listener: listener ?? null });
      const unsubscribe = listeners.onCapture(id, (eventId) => {
        listeners
          .event(id, eventId)
          .then((event) => event && send('capture', event, event.id))
          .catch((err) => req.log.error({ err }, 'sending a test event failed'));
      });
      const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
      streams.add(res);
      res.once('close', () => {
        streams.delete(res);
        clearInterval(heartbeat);
        unsubscribe();
      });
    },
  );

  app.get(
    '/workflows/:id/schema',
    {
      schema: routeSchema(tags, {
        params: IdParams,
        response: {
          200: Type.Object({
            jsonSchema: Type.Unknown(),
            fields: Type.Array(
              Type.Object({
                path: Type.String(),
                expression: Type.String(),
                type: Type.String(),
                example: Type.Unknown(),
                optional: Type.Boolean(),
              }),
            ),
            samples: Type.Integer(),
          }),
          ...errors(401, 404),
        },
      }),
    },
    async (req) => {
      const learned = await listeners.schema(req.params.id);
      return learned ?? { jsonSchema: {}, fields: [], samples: 0 };
    },
  );
}
