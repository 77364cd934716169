import Type from 'typebox';
import { SESSION_COOKIE, SESSION_DAYS, type User } from '../../accounts/accounts.js';
import type { App, HttpDeps } from '../deps.js';
import { errors } from '../schemas.js';
import { clientIp } from '../client-ip.js';

const UserSchema = Type.Object({
  id: Type.String(),
  email: Type.String(),
  role: Type.String({ description: 'owner, admin, editor or viewer (SPEC 11b)' }),
});
const userOf = ({ id, email, role }: User) => ({ id, email, role });
const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
const SessionSchema = Type.Object({ user: UserSchema, csrfToken: Type.String() });
/** Optional in the schema: a missing code is answered 403 setup_code_required, like a wrong one. */
const SetupBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    setupCode: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

/**
 * Sign-up (first start only, with the setup code hookflow printed), sign-in and sign-out for the UI;
 * these routes need no token. /auth/status says whether setup is needed, never a code.
 */
export function authRoutes(app: App, { accounts, config }: HttpDeps): void {
  // The webhook handler's rule (client-ip.ts), not Fastify's trustProxy: one algorithm for both.
  const ipOf = clientIp(config.http.trustProxy);
  const tags = ['accounts'];
  const cookieOptions = {
    // Behind a proxy that serves hookflow under a path, the session is only sent there.
    path: `${config.http.basePath}/`,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: config.http.baseUrl.startsWith('https:'),
    maxAge: SESSION_DAYS * 86_400,
  };

  app.get(
    '/auth/status',
    {
      schema: {
        tags,
        response: {
          200: Type.Object({
            setupRequired: Type.Boolean(),
            user: Type.Union([UserSchema, Type.Null()]),
            csrfToken: Type.Union([Type.String(), Type.Null()]),
          }),
        },
      },
    },
    async (req) => {
      const session = await accounts.session(req.cookies[SESSION_COOKIE]);
      return {
        setupRequired: await accounts.setupRequired(),
        user: session ? userOf(session.user) : null,
        csrfToken: session?.csrfToken ?? null,
      };
    },
  );

  app.post(
    '/auth/setup',
    { schema: { tags, body: SetupBody, response: { 201: SessionSchema, ...errors(400, 403, 409, 429) } } },
    async (req, reply) => {
      const { user, cookie, session } = await accounts.setup(
        req.body.email,
        req.body.password,
        req.body.setupCode,
        ipOf(req.raw),
      );
      reply.setCookie(SESSION_COOKIE, cookie, cookieOptions);
      return reply.code(201).send({ user: userOf(user), csrfToken: session.csrfToken });
    },
  );

  app.post(
    '/auth/login',
    { schema: { tags, body: Credentials, response: { 200: SessionSchema, ...errors(400, 401, 429) } } },
    async (req, reply) => {
      const { user, cookie, session } = await accounts.login(
        req.body.email,
        req.body.password,
        ipOf(req.raw),
      );
      reply.setCookie(SESSION_COOKIE, cookie, cookieOptions);
      return { user: userOf(user), csrfToken: session.csrfToken };
    },
  );

  app.post(
    '/members/invitations/accept',
    {
      schema: {
        tags: ['members'],
        summary:
          'The invite page: set a password for the invited email and sign in (the token is the last part of inviteUrl).',
        body: Type.Object(
          {
            token: Type.String({ minLength: 1, maxLength: 256 }),
            password: Type.String({ minLength: 1, maxLength: 1024 }),
          },
          { additionalProperties: false },
        ),
        response: { 201: SessionSchema, ...errors(400, 404) },
      },
    },
    async (req, reply) => {
      const { user, cookie, session } = await accounts.acceptInvitation(
        req.body.token,
        req.body.password,
        ipOf(req.raw),
      );
      reply.setCookie(SESSION_COOKIE, cookie, cookieOptions);
      return reply.code(201).send({ user: userOf(user), csrfToken: session.csrfToken });
    },
  );

  app.post('/auth/logout', { schema: { tags, response: { 204: Type.Null() } } }, async (req, reply) => {
    await accounts.logout(req.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: cookieOptions.path });
    return reply.code(204).send(null);
  });
}
