/**
 * Variables' rules (SPEC 7e), read by the API and the Variables page alike: a name is upper-case
 * letters, digits and `_`, not starting with a digit (so `$vars.NAME` needs no quoting); a value is
 * a short text (a URL, a key, a small JSON text: not a file).
 */
export const VARIABLE_NAME = '^[A-Z_][A-Z0-9_]*$';
export const VARIABLE_NAME_MAX_CHARS = 128;
export const VARIABLE_VALUE_MAX_CHARS = 65_536;

/** Why `name` cannot name a variable, as the end of a sentence; undefined when it can. */
export function variableNameProblem(name: string): string | undefined {
  if (name === '') return 'must not be empty';
  if (name.length > VARIABLE_NAME_MAX_CHARS)
    return `has ${name.length} characters; a name may have at most ${VARIABLE_NAME_MAX_CHARS}`;
  if (!new RegExp(VARIABLE_NAME).test(name))
    return 'may hold only capital letters A–Z, digits and _, and must not start with a digit (API_URL, SLACK_WEBHOOK)';
  return undefined;
}
