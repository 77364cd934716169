/** Schemas shared by routes (lists, ids, errors). */
import Type from 'typebox';

export const ErrorSchema = Type.Object({
  code: Type.String(),
  message: Type.String(),
  hint: Type.Optional(Type.String()),
  fields: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  executionId: Type.Optional(Type.String()),
  conflictingWorkflow: Type.Optional(Type.Object({ id: Type.String(), name: Type.String() })),
});

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const VersionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  version: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
});

export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
});

export const pageOf = <T extends Type.TSchema>(item: T) =>
  Type.Object({ items: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });

export const errors = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, ErrorSchema]));

const secured = [{ bearerAuth: [] }];

/**
 * The schema of a route behind the API token: its OpenAPI tags, the bearer-token security
 * requirement, then whatever the route declares (params, querystring, body, response, summary …).
 */
export const routeSchema = <S extends object>(tags: string[], schema: S) => ({
  tags,
  security: secured,
  ...schema,
});
