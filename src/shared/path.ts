/**
 * Webhook trigger paths (SPEC 2): one or more `/`-separated segments, each either static
 * (`[A-Za-z0-9._~-]+`) or a parameter `:name`. Leading/trailing slashes are ignored.
 */

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
export type Method = (typeof METHODS)[number];

export const MAX_PATH_LENGTH = 512;
export const MAX_PATH_SEGMENTS = 32;

const STATIC_SEGMENT = /^[A-Za-z0-9._~-]+$/;
const PARAM_SEGMENT = /^:[A-Za-z_][A-Za-z0-9_]*$/;
const SLASH = 47; // '/'

export function isMethod(value: string): value is Method {
  return (METHODS as readonly string[]).includes(value);
}

/**
 * `input` without its leading and trailing slashes. Scans by index (no regex), so it is cheap on the
 * request path and on hostile multi-megabyte input alike.
 */
export function trimSlashes(input: string): string {
  let start = 0;
  let end = input.length;
  while (start < end && input.charCodeAt(start) === SLASH) start++;
  while (end > start && input.charCodeAt(end - 1) === SLASH) end--;
  return start === 0 && end === input.length ? input : input.slice(start, end);
}

/** Echo user input in an error sentence without letting it grow the sentence unboundedly. */
function quote(segment: string): string {
  return JSON.stringify(segment.length > 40 ? `${segment.slice(0, 40)}…` : segment);
}

/**
 * Strip leading/trailing slashes (and collapse nothing else). Returns the normalized path, or an error
 * sentence when invalid: empty, a segment not matching [A-Za-z0-9._~-]+ or :name
 * (name = [A-Za-z_][A-Za-z0-9_]*), duplicate parameter names, over 512 chars or over 32 segments.
 *
 * Also refused: the dot segments `.` and `..` (clients resolve them before sending, so such a route
 * could never be called reliably) and the parameter name `__proto__` (it cannot be an own key of the
 * item's `params` object).
 */
export function normalizePath(input: string): { ok: true; path: string } | { ok: false; error: string } {
  const path = trimSlashes(input);
  if (path.length === 0) return { ok: false, error: 'The path is empty: give at least one segment.' };
  if (path.length > MAX_PATH_LENGTH) {
    return { ok: false, error: `The path is longer than ${MAX_PATH_LENGTH} characters.` };
  }
  // A limit of MAX + 1 pieces is enough to tell "too many" without splitting everything.
  const segments = path.split('/', MAX_PATH_SEGMENTS + 1);
  if (segments.length > MAX_PATH_SEGMENTS) {
    return { ok: false, error: `The path has more than ${MAX_PATH_SEGMENTS} segments.` };
  }
  const params = new Set<string>();
  for (const segment of segments) {
    if (segment.length === 0) {
      return { ok: false, error: 'The path contains an empty segment (two slashes in a row).' };
    }
    if (segment.charCodeAt(0) === 58 /* ':' */) {
      if (!PARAM_SEGMENT.test(segment)) {
        return {
          ok: false,
          error: `The path parameter ${quote(segment)} is invalid: a name starts with a letter or _ and continues with letters, digits or _.`,
        };
      }
      const name = segment.slice(1);
      if (name === '__proto__') {
        return { ok: false, error: 'The path parameter name "__proto__" is reserved.' };
      }
      if (params.has(name)) {
        return { ok: false, error: `The path parameter ${quote(segment)} appears more than once.` };
      }
      params.add(name);
    } else if (!STATIC_SEGMENT.test(segment)) {
      return {
        ok: false,
        error: `The path segment ${quote(segment)} is invalid: use letters, digits, ".", "_", "~", "-", or ":name" for a parameter.`,
      };
    } else if (segment === '.' || segment === '..') {
      return { ok: false, error: `The path segment ${quote(segment)} is not allowed.` };
    }
  }
  return { ok: true, path };
}

/**
 * The conflict key of a path: parameter segments replaced by ':' so `orders/:id` and `orders/:x`
 * collide. Expects a path already normalized by normalizePath.
 */
export function pathShape(path: string): string {
  return path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? ':' : segment))
    .join('/');
}
