import { AppError } from '../../errors.js';
import { metricsAuth } from '../api-auth.js';
import type { App, HttpDeps } from '../deps.js';
import { checkPermission } from '../permissions.js';

/**
 * Probes and metrics, served at the root and under /api/v1. The probes need no token (load
 * balancers); `/metrics` needs an API token, a signed-in session or HOOKFLOW_METRICS_TOKEN (SPEC 8).
 */
export function healthRoutes(app: App, { store, health, metrics, tokens, accounts, config }: HttpDeps): void {
  const metricsGuard = metricsAuth(tokens, accounts, config.http.metricsToken);
  for (const prefix of ['', '/api/v1']) {
    app.get(`${prefix}/healthz`, { schema: { tags: ['health'] } }, async () => ({ status: 'ok' }));
    // Ready when the store answers and takes writes (SPEC 3.5): after a write it could not take,
    // 503 until one succeeds — a real one, or the one health.ready() tries once writes stop failing.
    app.get(`${prefix}/readyz`, { schema: { tags: ['health'] } }, async () => {
      try {
        await store.ping();
      } catch (err) {
        health.failed(err);
        throw new AppError('not_ready', 'The store cannot be reached.', {
          hint: 'Check that the database is running and HOOKFLOW_DATABASE_URL / HOOKFLOW_DATA_DIR point at it.',
          cause: err,
        });
      }
      if (!(await health.ready())) {
        throw new AppError(
          'not_ready',
          'The store cannot take writes: requests are refused with 503 store_unavailable.',
          {
            hint: 'The server log says why (one error line when it started: disk full, database unreachable, read-only). It is ready again by itself once a write succeeds.',
            cause: health.cause,
          },
        );
      }
      return { status: 'ready' };
    });
    app.get(
      `${prefix}/metrics`,
      {
        schema: { tags: ['health'], security: [{ bearerAuth: [] }] },
        onRequest: [metricsGuard, checkPermission],
      },
      async (_req, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
    );
  }
}
