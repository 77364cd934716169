/** A migration made for a dialect: the capability flags carry the one difference (binary columns). */
import type { Migration } from 'kysely';
import type { DialectCapabilities } from '../store.js';

export type MigrationFactory = (caps: DialectCapabilities) => Migration;
