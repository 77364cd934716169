/** Run now (SPEC 7f): a test-mode run of the draft with an item, like the editor's button. */
import Type from 'typebox';
import type { App, HttpDeps } from '../deps.js';
import { errors, IdParams, routeSchema } from '../schemas.js';

export function runNowRoutes(app: App, { executions }: HttpDeps): void {
  app.post(
    '/workflows/:id/run',
    {
      schema: routeSchema(['workflows'], {
        summary:
          "Run the draft once in test mode with `item` (default: the newest test event's item, else {}).",
        params: IdParams,
        body: Type.Object(
          {
            item: Type.Optional(
              Type.Record(Type.String(), Type.Unknown(), {
                description: 'The trigger item the first step receives (a JSON object).',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 202: Type.Object({ executionId: Type.String() }), ...errors(400, 401, 404) },
      }),
      // No body at all is `{}` (Fastify validates a missing body as undefined).
      preValidation: (req, _reply, done) => {
        req.body ??= {};
        done();
      },
    },
    async (req, reply) =>
      reply.code(202).send({ executionId: await executions.runNow(req.params.id, req.body.item) }),
  );
}
