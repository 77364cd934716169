/**
 * The audit context of an API call (SPEC 11b): who (the member signed in, or the API token) and
 * from which address (client-ip.ts, the rule the webhooks use too). Routes hand it to the service
 * that makes the change, which writes the audit row in the change's transaction.
 */
import type { FastifyRequest } from 'fastify';
import type { Audit } from '../audit/audit.js';
import type { Config } from '../config.js';
import { principalOf } from './api-auth.js';
import { clientIp } from './client-ip.js';

export function auditContext(http: Config['http']): (request: FastifyRequest) => Audit {
  const ipOf = clientIp(http.trustProxy);
  return (request) => {
    const p = principalOf(request);
    const ip = ipOf(request.raw);
    if (!p) return { actor: { type: 'system', id: null, name: 'hookflow' }, ip };
    if (p.tokenId !== undefined) {
      return { actor: { type: 'token', id: p.tokenId, name: p.tokenName ?? p.name }, ip };
    }
    return { actor: { type: 'user', id: p.memberId, name: p.name }, ip };
  };
}
