/**
 * `hookflow secrets rotate`: re-seal every secret at rest under a new key, in one
 * transaction — credentials' data, secret variables' values, webhook trigger secrets of every workflow, and those of every
 * saved version (history rows keep their own sealed copies). The current key is the configured
 * one (HOOKFLOW_ENCRYPTION_KEY, or the data dir's generated `encryption.key`); the new one comes
 * from HOOKFLOW_NEW_ENCRYPTION_KEY (an environment variable, so it appears in no process list or
 * shell history). With a generated key file, the file is replaced by the new key after the commit;
 * with HOOKFLOW_ENCRYPTION_KEY, every process must be restarted with the new value.
 *
 * Stop every hookflow process first: one still running keeps the old key and can no longer open
 * what was re-sealed. A value that opens with the new key already is kept as it is, so running
 * the command again (say, after the file could not be replaced) is harmless; a value that opens
 * with neither key stops it before anything is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { SecretBox } from '../security/secrets.js';
import { credentialsRepo } from '../store/credentials.js';
import { oauth2Repo } from '../store/oauth2.js';
import { variablesRepo } from '../store/variables.js';
import type { Store } from '../store/store.js';
import { workflowsRepo } from '../store/workflows.js';
import { SECRET_FIELDS } from '../model/workflow.js';
import { PATHS_LOCK } from '../workflows/service.js';
import { record, SYSTEM } from '../audit/audit.js';

export interface RotateCounts {
  credentials: number;
  /** Secret variables (SPEC 7e). */
  variables: number;
  workflows: number;
  versions: number;
}

export class RotateError extends Error {}

export async function rotateSecrets(
  store: Store,
  current: SecretBox,
  next: SecretBox,
): Promise<RotateCounts> {
  let unreadable = 0;
  const reseal = (value: string): string => {
    if (!SecretBox.isSealed(value)) return next.seal(value);
    const plain = current.tryReveal(value);
    if (plain !== undefined) return next.seal(plain);
    if (next.tryReveal(value) !== undefined) return next.innermost(value);
    unreadable++;
    return value;
  };
  /** The trigger (JSON object) with its auth secrets and handshake token re-sealed; whether any was. */
  const resealTrigger = (
    trigger: { auth?: Record<string, unknown>; handshakeToken?: unknown } | undefined,
  ): boolean => {
    let changed = false;
    if (trigger && typeof trigger.handshakeToken === 'string') {
      trigger.handshakeToken = reseal(trigger.handshakeToken);
      changed = true;
    }
    const auth = trigger?.auth;
    if (!auth) return changed;
    for (const field of SECRET_FIELDS) {
      if (typeof auth[field] === 'string') {
        auth[field] = reseal(auth[field] as string);
        changed = true;
      }
    }
    return changed;
  };

  return store.transaction(
    async (trx) => {
      const counts: RotateCounts = { credentials: 0, variables: 0, workflows: 0, versions: 0 };
      for (const row of await credentialsRepo.listData(trx)) {
        await credentialsRepo.setData(trx, row.id, reseal(row.data));
        counts.credentials++;
      }
      // OAuth2 tokens, and the PKCE verifiers of connections in progress.
      for (const row of await oauth2Repo.listSealed(trx))
        await oauth2Repo.setSealed(trx, row.credential_id, reseal(row.tokens));
      for (const row of await oauth2Repo.listVerifiers(trx))
        await oauth2Repo.setVerifier(trx, row.state_hash, reseal(row.verifier));
      for (const row of await variablesRepo.listSecret(trx)) {
        await variablesRepo.setValue(trx, row.name, reseal(row.value));
        counts.variables++;
      }
      for (const row of await workflowsRepo.listTriggers(trx)) {
        const trigger = JSON.parse(row.trigger) as { auth?: Record<string, unknown> };
        if (!resealTrigger(trigger)) continue;
        await workflowsRepo.setTrigger(trx, row.id, JSON.stringify(trigger));
        counts.workflows++;
      }
      for (const row of await workflowsRepo.listDefinitions(trx)) {
        const definition = JSON.parse(row.definition) as { trigger?: { auth?: Record<string, unknown> } };
        if (!resealTrigger(definition.trigger)) continue;
        await workflowsRepo.setDefinition(trx, row.workflow_id, row.version, JSON.stringify(definition));
        counts.versions++;
      }
      // Thrown inside the transaction: nothing is written.
      if (unreadable > 0)
        throw new RotateError(
          `${unreadable} stored secret(s) open with neither the current key nor the new one; nothing was changed. Is HOOKFLOW_ENCRYPTION_KEY (or the data dir's encryption.key) the key they were sealed with?`,
        );
      // Counts only: the audit log never holds a key.
      await record(trx, SYSTEM, {
        action: 'secrets.rotate',
        target: { type: 'encryption_key', id: null, name: 'HOOKFLOW_ENCRYPTION_KEY' },
        details: { ...counts },
      });
      return counts;
    },
    { lock: PATHS_LOCK },
  );
}

/** Replace the data dir's generated key file with `key` (written aside, then renamed over it). */
export function replaceKeyFile(dataDir: string, key: string): string {
  const file = path.join(dataDir, 'encryption.key');
  const tmp = `${file}.new`;
  fs.writeFileSync(tmp, `${key}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return file;
}
