import { AppError } from '../../errors.js';
import type { App, HttpDeps } from '../deps.js';

/** Probes and metrics; served at the root and under /api/v1, without a token (load balancers and Prometheus). */
export function healthRoutes(app: App, { store, metrics }: HttpDeps): void {
  for (const prefix of ['', '/api/v1']) {
    app.get(`${prefix}/healthz`, { schema: { tags: ['health'] } }, async () => ({ status: 'ok' }));
    app.get(`${prefix}/readyz`, { schema: { tags: ['health'] } }, async () => {
      try {
        await store.ping();
      } catch (err) {
        throw new AppError('not_ready', 'The store cannot be reached.', {
          hint: 'Check that the database is running and HOOKFLOW_DATABASE_URL / HOOKFLOW_DATA_DIR point at it.',
          cause: err,
        });
      }
      return { status: 'ready' };
    });
    app.get(`${prefix}/metrics`, { schema: { tags: ['health'] } }, async (_req, reply) =>
      reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
  }
}
