/**
 * Workflows as the API sees them: TypeBox schemas (validation + OpenAPI) and the domain types
 * derived from them. The stored trigger is `TriggerConfig`; the API adds `testUrl`/`productionUrl`.
 */
import Type, { type Static } from 'typebox';
import { METHODS } from '../shared/path.js';
import { FIELD_PATH_PATTERN, MAX_SEARCH_FIELDS } from '../shared/search-fields.js';

const Secret = Type.String({ minLength: 1, maxLength: 4096 });

export const AuthSchema = Type.Union([
  Type.Object({ type: Type.Literal('none') }, { additionalProperties: false }),
  Type.Object(
    {
      type: Type.Literal('basic'),
      username: Type.String({ minLength: 1, maxLength: 256 }),
      password: Secret,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('header'),
      name: Type.String({ minLength: 1, maxLength: 256, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$" }),
      value: Secret,
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('jwt'),
      algorithm: Type.Union([Type.Literal('HS256'), Type.Literal('RS256'), Type.Literal('ES256')]),
      secret: Type.Optional(Secret),
      publicKey: Type.Optional(Type.String({ minLength: 1, maxLength: 16384 })),
      issuer: Type.Optional(Type.String()),
      audience: Type.Optional(Type.String()),
    },
    { additionalProperties: false },
  ),
  Type.Object(
    {
      type: Type.Literal('hmac'),
      preset: Type.Union([
        Type.Literal('github'),
        Type.Literal('stripe'),
        Type.Literal('slack'),
        Type.Literal('shopify'),
        Type.Literal('standard-webhooks'),
        Type.Literal('custom'),
      ]),
      secret: Secret,
      header: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      algorithm: Type.Optional(
        Type.Union([Type.Literal('sha256'), Type.Literal('sha1'), Type.Literal('sha512')]),
      ),
      encoding: Type.Optional(Type.Union([Type.Literal('hex'), Type.Literal('base64')])),
      prefix: Type.Optional(Type.String({ maxLength: 64 })),
      toleranceSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    },
    { additionalProperties: false },
  ),
]);
export type AuthConfig = Static<typeof AuthSchema>;

export const ResponseSchema = Type.Object(
  {
    mode: Type.Union([Type.Literal('immediately'), Type.Literal('lastStep'), Type.Literal('respondStep')]),
    status: Type.Optional(Type.Integer({ minimum: 200, maximum: 299 })),
    body: Type.Optional(Type.Unknown()),
    noContent: Type.Optional(Type.Boolean()),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 300_000 })),
    /**
     * false: answers go out without `Content-Security-Policy: sandbox` (for pages served on
     * purpose, which then run on the server's origin). Default true (http/routes/webhooks.ts).
     */
    sandbox: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type ResponseConfig = Static<typeof ResponseSchema>;

export const TriggerOptionsSchema = Type.Object(
  {
    maxBodyBytes: Type.Optional(Type.Integer({ minimum: 1 })),
    allowedOrigins: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 512 }), { maxItems: 100 }),
    ),
    ipAllowlist: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 1000 })),
    rateLimit: Type.Optional(
      Type.Object(
        {
          requests: Type.Integer({ minimum: 1, maximum: 1_000_000 }),
          perSeconds: Type.Integer({ minimum: 1, maximum: 86_400 }),
        },
        { additionalProperties: false },
      ),
    ),
    idempotency: Type.Optional(
      Type.Object(
        {
          header: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
          key: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
          windowSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 30 * 86_400 })),
        },
        { additionalProperties: false },
      ),
    ),
    schemaCheck: Type.Optional(
      Type.Union([Type.Literal('off'), Type.Literal('warn'), Type.Literal('reject')]),
    ),
  },
  { additionalProperties: false },
);
export type TriggerOptions = Static<typeof TriggerOptionsSchema>;

/**
 * Provider handshakes (SPEC 7g): the URL checks Slack, Meta, Microsoft Graph and Zoom make before
 * they send events, answered by hookflow without starting an execution (webhooks/handshake.ts).
 */
export const HandshakeSchema = Type.Union([
  Type.Literal('slack'),
  Type.Literal('meta'),
  Type.Literal('microsoft-graph'),
  Type.Literal('zoom'),
]);
export type Handshake = Static<typeof HandshakeSchema>;

/**
 * Trigger health alerts (SPEC 7g): the workflow run (mode `alert`) when production calls stop for
 * `silenceMinutes`, refusals reach `rejectionsPerMinute`, or a payload drifts from what the
 * published version's expressions read (`schemaDrift`). src/health watches them.
 */
export const TriggerAlertsSchema = Type.Object(
  {
    workflowId: Type.String({ minLength: 1, maxLength: 64 }),
    silenceMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 43_200 })),
    rejectionsPerMinute: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    schemaDrift: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type TriggerAlerts = Static<typeof TriggerAlertsSchema>;

/** A webhook method (shared/path.ts METHODS); the http step's methods add OPTIONS to these. */
export const MethodSchema = Type.Union([
  Type.Literal('GET'),
  Type.Literal('POST'),
  Type.Literal('PUT'),
  Type.Literal('PATCH'),
  Type.Literal('DELETE'),
  Type.Literal('HEAD'),
]);

/** When a schedule's ticks were missed while no process ran (SPEC 7f). */
export const MissedSchema = Type.Union([Type.Literal('runOnce'), Type.Literal('skip')]);

/**
 * What a client may send for a trigger; everything is optional and defaulted. One object for both
 * types (webhook, the default, and schedule): the fields of the other type are ignored, so a PATCH
 * that only says `{"type": "schedule", "cron": …}` of a webhook workflow works (workflows/trigger.ts
 * checks what each type needs, naming the field).
 */
export const TriggerInputSchema = Type.Object(
  {
    type: Type.Optional(Type.Union([Type.Literal('webhook'), Type.Literal('schedule')])),
    /** Schedule: 5 or 6 fields (seconds first), or a nickname such as `@hourly`. */
    cron: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Schedule: an IANA time zone; default UTC. */
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    missed: Type.Optional(MissedSchema),
    // Returned by the API for a schedule; accepted and ignored on input.
    nextRunAt: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    methods: Type.Optional(
      Type.Array(MethodSchema, { minItems: 1, maxItems: METHODS.length, uniqueItems: true }),
    ),
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
    auth: Type.Optional(AuthSchema),
    response: Type.Optional(ResponseSchema),
    options: Type.Optional(TriggerOptionsSchema),
    handshake: Type.Optional(Type.Union([HandshakeSchema, Type.Null()])),
    alerts: Type.Optional(Type.Union([TriggerAlertsSchema, Type.Null()])),
    /** Meta's verify token or Zoom's secret token; stored sealed, shown as "***". */
    handshakeToken: Type.Optional(Type.Union([Secret, Type.Null()])),
    // Returned by the API; accepted and ignored on input so a GET result can be PUT back.
    testUrl: Type.Optional(Type.String()),
    productionUrl: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
export type TriggerInput = Static<typeof TriggerInputSchema>;

export const StepSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128 }),
    type: Type.String({ minLength: 1, maxLength: 64 }),
  },
  { additionalProperties: true },
);
export type Step = Static<typeof StepSchema> & Record<string, unknown>;

const StepsSchema = Type.Array(StepSchema, { maxItems: 200 });

/**
 * Workflow settings (SPEC 1, 7c). `errorWorkflowId`: the workflow run (mode `error`) when a
 * production execution of this one fails; null (or leaving it out) sets none. `searchFields`
 * fields of the trigger item indexed for `GET /executions?where=`, from the executions
 * this version runs on; null or `[]` declares none.
 */
/**
 * `settings.concurrency` (SPEC 7d): executions whose `key` values are equal run at most `limit`
 * at a time, first accepted first started; with `newestWins`, one whose value is lower than that
 * of an execution of its key that has started is `skipped`. null (or leaving it out) sets none.
 */
export const ConcurrencySettingsSchema = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'An expression over the trigger item, e.g. {{ body.customer.id }}; null or failing: no key.',
    }),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        description: 'Executions of one key at a time (default 1).',
      }),
    ),
    newestWins: Type.Optional(
      Type.Union([
        Type.String({
          minLength: 1,
          maxLength: 2048,
          description:
            'An expression giving a number or an ISO-8601 time, e.g. {{ body.data.object.updated }}: an execution whose value is lower than one of its key that has started is skipped.',
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);
export interface ConcurrencySettings {
  key: string;
  limit?: number;
  newestWins?: string;
}

export const WorkflowSettingsSchema = Type.Object(
  {
    concurrency: Type.Optional(Type.Union([ConcurrencySettingsSchema, Type.Null()])),
    errorWorkflowId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
    searchFields: Type.Optional(
      Type.Union([
        Type.Array(Type.String({ minLength: 1, maxLength: 512, pattern: FIELD_PATH_PATTERN }), {
          maxItems: MAX_SEARCH_FIELDS,
          uniqueItems: true,
        }),
        Type.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);
export interface WorkflowSettings {
  /** Concurrency key, limit and newest wins (SPEC 7d); absent when none. */
  concurrency?: ConcurrencySettings;
  errorWorkflowId?: string;
  /** Trigger-item fields indexed for search (dotted paths); absent when none. */
  searchFields?: string[];
}

export const WorkflowCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    trigger: Type.Optional(TriggerInputSchema),
    steps: Type.Optional(StepsSchema),
    settings: Type.Optional(WorkflowSettingsSchema),
  },
  { additionalProperties: false },
);
export type WorkflowCreate = Static<typeof WorkflowCreateSchema>;

/** PATCH body: a JSON merge patch (RFC 7386) of name, trigger, steps and settings. */
export const WorkflowPatchSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    trigger: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    steps: Type.Optional(StepsSchema),
    settings: Type.Optional(WorkflowSettingsSchema),
  },
  { additionalProperties: false },
);
export type WorkflowPatch = Static<typeof WorkflowPatchSchema>;

export interface WebhookTrigger {
  type: 'webhook';
  methods: (typeof METHODS)[number][];
  path: string;
  auth: AuthConfig;
  response: ResponseConfig;
  options: TriggerOptions;
  alerts?: TriggerAlerts;
  handshake?: Handshake;
  /** Sealed (security/secrets.ts); revealed only to answer the handshake. */
  handshakeToken?: string;
}

/** SPEC 7f: while the workflow is active, each tick of `cron` in `timezone` starts one execution. */
export interface ScheduleTrigger {
  type: 'schedule';
  cron: string;
  timezone: string;
  missed: 'runOnce' | 'skip';
}

export type TriggerConfig = WebhookTrigger | ScheduleTrigger;

export const isWebhookTrigger = (t: TriggerConfig): t is WebhookTrigger => t.type !== 'schedule';

export interface Workflow {
  id: string;
  name: string;
  active: boolean;
  /** The latest saved version: the draft that test listening and test runs use. */
  version: number;
  /**
   * The version production runs (SPEC 1): set to `version` by publish and activate, null until
   * then, kept by deactivate (it says what ran last; activating again publishes the latest).
   */
  publishedVersion: number | null;
  trigger: TriggerConfig;
  steps: Step[];
  /** Saved with each version; absent (read as `{}`) in versions saved before settings existed. */
  settings?: WorkflowSettings;
  createdAt: string;
  updatedAt: string;
}

/** A workflow whose trigger is a webhook: what the webhook pipeline serves. */
export type WebhookWorkflow = Workflow & { trigger: WebhookTrigger };
export const isWebhookWorkflow = (w: Workflow): w is WebhookWorkflow => isWebhookTrigger(w.trigger);

export const WorkflowSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  active: Type.Boolean(),
  version: Type.Integer({ description: 'The latest saved version (the draft).' }),
  publishedVersion: Type.Union([Type.Integer(), Type.Null()], {
    description:
      'The version production traffic runs; null until the workflow is first published or activated.',
  }),
  // One object for both trigger types (a union would make the serializer try each branch): a
  // webhook trigger has methods … productionUrl, a schedule cron, timezone, missed, nextRunAt.
  trigger: Type.Object({
    type: Type.Union([Type.Literal('webhook'), Type.Literal('schedule')]),
    methods: Type.Optional(Type.Array(MethodSchema)),
    path: Type.Optional(Type.String()),
    auth: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    response: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    handshake: Type.Optional(HandshakeSchema),
    handshakeToken: Type.Optional(Type.Literal('***')),
    alerts: Type.Optional(TriggerAlertsSchema),
    testUrl: Type.Optional(Type.String()),
    productionUrl: Type.Optional(Type.String()),
    cron: Type.Optional(Type.String()),
    timezone: Type.Optional(Type.String()),
    missed: Type.Optional(MissedSchema),
    nextRunAt: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          'Schedule: the next tick that will start an execution (of the published version), null while inactive.',
      }),
    ),
  }),
  steps: Type.Array(Type.Record(Type.String(), Type.Unknown())),
  settings: Type.Object({
    concurrency: Type.Optional(
      Type.Object({
        key: Type.String(),
        limit: Type.Optional(Type.Integer()),
        newestWins: Type.Optional(Type.String()),
      }),
    ),
    errorWorkflowId: Type.Optional(Type.String()),
    searchFields: Type.Optional(
      Type.Array(Type.String(), {
        description:
          'Fields of the trigger item indexed for GET /executions?where= (e.g. body.order_id), from the executions this version runs on.',
      }),
    ),
  }),
  createdAt: Type.String(),
  updatedAt: Type.String(),
});

/** Where secrets live in an auth config; the API shows them as "***". */
export const SECRET_FIELDS = ['password', 'value', 'secret'] as const;
export const MASK = '***';
