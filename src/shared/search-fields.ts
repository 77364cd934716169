/**
 * Searchable fields (`settings.searchFields`), shared by the server's validation and the
 * editor's: a field of the trigger item in dots, e.g. `body.order_id` or `headers.x-github-event`
 * — up to 10 names of letters, digits and `_$@-` (also what `GET /executions?where=` accepts).
 */
export const FIELD_PATH_PATTERN = '^[A-Za-z0-9_$@-]{1,128}(\\.[A-Za-z0-9_$@-]{1,128}){0,9}$';

/** At most this many per workflow: each costs a row (and an index entry) per execution. */
export const MAX_SEARCH_FIELDS = 5;
