/**
 * Secrets at rest (SPEC 6): webhook auth secrets are stored sealed with AES-256-GCM, as
 * `enc:v1:<base64 iv|tag|ciphertext>`, so neither the database nor an export holds them in clear.
 * They stay sealed in memory too and are revealed only where a verifier needs them.
 *
 * The key comes from HOOKFLOW_ENCRYPTION_KEY (any string of 32+ characters, stretched with
 * SHA-256), or is generated once into `<data dir>/encryption.key` with a warning: then the data dir
 * must be kept. A distributed setup (PostgreSQL) does not generate one: every process needs the same
 * key, so HOOKFLOW_ENCRYPTION_KEY is required there (or a key file already in the data dir).
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { type Config, ConfigError } from '../config.js';

const PREFIX = 'enc:v1:';
const KEY_FILE = 'encryption.key';

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.#key = key;
  }

  static fromPassphrase(passphrase: string): SecretBox {
    return new SecretBox(createHash('sha256').update(passphrase, 'utf8').digest());
  }

  /**
   * The configured key, or the data dir's generated one (created on first start of an embedded
   * store; a distributed one needs HOOKFLOW_ENCRYPTION_KEY, or a key file put there by hand).
   */
  static load(config: { security: Config['security']; store: Config['store'] }, log: Logger): SecretBox {
    if (config.security.encryptionKey) return SecretBox.fromPassphrase(config.security.encryptionKey);
    const file = path.join(config.store.dataDir, KEY_FILE);
    try {
      return SecretBox.fromPassphrase(fs.readFileSync(file, 'utf8').trim());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // Processes sharing a PostgreSQL store must share the key: one generated here would seal
    // secrets the other processes cannot open (their webhooks would refuse every signed call).
    if (config.store.databaseUrl) {
      throw new ConfigError([
        'HOOKFLOW_ENCRYPTION_KEY is required with HOOKFLOW_DATABASE_URL: every hookflow process sharing the database must seal and open secrets with the same key; set the same value (32+ characters) on each',
      ]);
    }
    fs.mkdirSync(config.store.dataDir, { recursive: true, mode: 0o700 });
    const generated = randomBytes(32).toString('base64');
    // `wx`: never overwrite a key another process wrote a moment ago.
    try {
      fs.writeFileSync(file, `${generated}\n`, { mode: 0o600, flag: 'wx' });
      log.warn(
        { file },
        'HOOKFLOW_ENCRYPTION_KEY is not set: generated a key for secrets at rest; back it up with the data',
      );
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    return SecretBox.fromPassphrase(fs.readFileSync(file, 'utf8').trim());
  }

  /**
   * A key of its own for one purpose (`resume-url`: engine/resume-url.ts), derived from this one
   * (HMAC-SHA256 of the purpose), hex: what it protects never shares a key with sealed secrets.
   */
  derive(purpose: string): string {
    return createHmac('sha256', this.#key).update(`hookflow:${purpose}`, 'utf8').digest('hex');
  }

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(PREFIX);
  }

  /**
   * Seals a secret a client sent, exactly once: a value this key already sealed (a client may send
   * back what a database dump or an old export holds) is kept as its single sealed layer, never
   * sealed again. A value that merely looks sealed but does not open with this key is someone's
   * literal password, and is sealed like any other.
   */
  sealOnce(value: string): string {
    return this.#open(value) === undefined ? this.seal(value) : this.innermost(value);
  }

  /**
   * A stored value without the extra layers that sealing an already-sealed value added (an older
   * PATCH sealed the stored value again on every save). Peels while what a layer holds is
   * itself sealed with this key; a value that does not open is returned as it is.
   */
  innermost(value: string): string {
    let current = value;
    let inner = this.#open(current);
    while (inner !== undefined) {
      const next = this.#open(inner);
      if (next === undefined) return current;
      current = inner;
      inner = next;
    }
    return current;
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64');
  }

  /** The plain value of a sealed string (plain strings pass through: data from before sealing). */
  reveal(value: string): string {
    if (!SecretBox.isSealed(value)) return value;
    try {
      return this.#decrypt(value);
    } catch (err) {
      throw new Error(
        'A stored secret cannot be decrypted: HOOKFLOW_ENCRYPTION_KEY differs from the key it was sealed with.',
        {
          cause: err,
        },
      );
    }
  }

  /**
   * The plain value of a value this key sealed (extra layers peeled), or undefined when it is not
   * one (plain, or sealed with another key). Key rotation (cli/secrets.ts) tells the two keys apart with it.
   */
  tryReveal(value: string): string | undefined {
    return this.#open(this.innermost(value));
  }

  /** What a sealed value holds, or undefined when it is not one this key sealed. */
  #open(value: string): string | undefined {
    if (!SecretBox.isSealed(value)) return undefined;
    try {
      return this.#decrypt(value);
    } catch {
      // Not sealed by this key (or not a sealed value at all): the caller treats it as plain.
      return undefined;
    }
  }

  #decrypt(value: string): string {
    const raw = Buffer.from(value.slice(PREFIX.length), 'base64');
    // Shorter than iv + tag: not a value seal() wrote (createDecipheriv would throw on a short tag).
    if (raw.length < 28) throw new Error('not a sealed value');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
  }
}
