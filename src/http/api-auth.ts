/**
 * Authentication of the management API: `Authorization: Bearer <API_TOKEN>` on every call.
 * (Cookie sessions for the UI come with the accounts work.)
 */
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { TokenService } from '../tokens/tokens.js';

export function apiAuth(tokens: TokenService) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) {
      throw new AppError('unauthorized', 'This API needs an API token.', {
        hint: 'Send Authorization: Bearer <API_TOKEN>; create a token with `hookflow tokens create --name <name>`.',
        headers: { 'www-authenticate': 'Bearer realm="hookflow api"' },
      });
    }
    const token = await tokens.verify(match[1]!);
    if (!token) {
      throw new AppError('unauthorized', 'The API token is unknown or was revoked.', {
        hint: 'Create a new token with `hookflow tokens create --name <name>`.',
        headers: { 'www-authenticate': 'Bearer realm="hookflow api", error="invalid_token"' },
      });
    }
  };
}
