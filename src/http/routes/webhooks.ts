/**
 * The webhook URLs: `/webhook/*` (production) and `/webhook-test/*` (test). This file only adapts
 * HTTP to the receiver (webhooks/receive.ts): the URL is matched in onRequest, before any body
 * is read, so unknown paths, wrong methods and declared oversize bodies cost nothing; the body is
 * read as raw bytes (one limit on the bytes received; parsing is the receiver's).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { toAppError, sendError } from '../error-handler.js';
import type { App, HttpDeps } from '../deps.js';
import type { Matched, Outcome } from '../../webhooks/receive.js';
import type { Mode } from '../../webhooks/triggers.js';
import { corsHeaders, preflightHeaders } from '../../webhooks/cors.js';

declare module 'fastify' {
  interface FastifyRequest {
    hookflowMatch: Matched | null;
  }
}

const PREFIXES: [string, Mode][] = [
  ['/webhook/', 'production'],
  ['/webhook-test/', 'test'],
];

export function webhookRoutes(app: App, { receiver, config, metrics, rejections }: HttpDeps): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: config.http.maxBodyBytes },
      (_req, body, done) => done(null, body),
    );
    scope.decorateRequest('hookflowMatch', null);

    scope.setErrorHandler((err, req, reply) => {
      const appError = toAppError(err);
      metrics.webhookRejections.inc({ mode: modeOf(req), code: appError.code });
      if (req.hookflowMatch && appError.status < 500) {
        rejections.record(req.hookflowMatch.route.workflow.id, {
          at: new Date().toISOString(),
          mode: modeOf(req),
          code: appError.code,
          message: appError.message,
          method: req.method,
          ip: req.ip,
        });
      }
      if (appError.code === 'internal_error') req.log.error({ err }, 'webhook request failed');
      const trigger = req.hookflowMatch?.route.workflow.trigger;
      if (trigger) reply.headers(corsHeaders(trigger, req.headers.origin));
      // A body refused by its declared size was never read: without this, Node would drain all of it
      // (up to the 60 s request timeout) to keep the connection alive. Fastify does the same for its own 413.
      if (appError.code === 'payload_too_large' && req.body === undefined)
        reply.header('connection', 'close');
      sendError(reply, appError);
    });

    scope.addHook('onResponse', (req, reply, done) => {
      metrics.webhookRequests.inc({ mode: modeOf(req), status: String(reply.statusCode) });
      done();
    });

    for (const [prefix, mode] of PREFIXES) {
      scope.route({
        method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'],
        url: `${prefix}*`,
        exposeHeadRoute: false,
        schema: { hide: true },
        onRequest: (req, _reply, done) => {
          const path = rawPath(req.url, prefix.length);
          // A preflight is matched against the method it announces.
          const method =
            req.method === 'OPTIONS'
              ? String(req.headers['access-control-request-method'] ?? 'OPTIONS').toUpperCase()
              : req.method;
          try {
            const matched = receiver.match(mode, method, path);
            req.hookflowMatch = matched;
            receiver.checkCaller(matched, req.ip);
            if (req.method !== 'OPTIONS')
              receiver.checkDeclaredLength(matched, req.headers['content-length']);
            req.hookflowMatch = matched;
            done();
          } catch (err) {
            done(err as Error);
          }
        },
        handler: async (req: FastifyRequest, reply: FastifyReply) => {
          const matched = req.hookflowMatch!;
          const trigger = matched.route.workflow.trigger;
          if (req.method === 'OPTIONS') {
            const headers = preflightHeaders(
              trigger,
              req.headers.origin,
              req.headers['access-control-request-headers'],
            );
            return reply.code(204).headers(headers).send();
          }
          const url = req.url;
          const q = url.indexOf('?');
          const outcome = await receiver.accept(matched, {
            method: req.method,
            path: rawPath(url, prefix.length),
            rawQuery: q === -1 ? '' : url.slice(q + 1),
            headers: req.headers,
            body: Buffer.isBuffer(req.body) ? req.body : EMPTY,
            ip: req.ip,
            receivedAt: new Date(),
          });
          return sendOutcome(reply.headers(corsHeaders(trigger, req.headers.origin)), outcome);
        },
      });
    }
  });
}

const EMPTY = Buffer.alloc(0);

function rawPath(url: string, prefixLength: number): string {
  const q = url.indexOf('?');
  return url.slice(prefixLength, q === -1 ? undefined : q);
}

function modeOf(req: FastifyRequest): Mode {
  return req.url.startsWith('/webhook-test/') ? 'test' : 'production';
}

function sendOutcome(reply: FastifyReply, outcome: Outcome): FastifyReply {
  reply.code(outcome.status).headers(outcome.headers);
  const { body } = outcome;
  if (body === undefined || outcome.status === 204) return reply.send();
  if (Buffer.isBuffer(body)) return reply.send(body);
  if (typeof body === 'string' && !reply.hasHeader('content-type'))
    return reply.type('text/plain; charset=utf-8').send(body);
  if (!reply.hasHeader('content-type')) reply.type('application/json; charset=utf-8');
  return reply.send(typeof body === 'string' ? body : JSON.stringify(body));
}
