/**
 * The in-memory routing table of webhook triggers, consulted on every webhook request.
 *
 * A segment trie keyed by path *shape*: static segments are children by exact text, all parameter
 * segments share one `param` child (so `orders/:id` and `orders/:x` are the same node). A node maps
 * method → route, because different workflows may own the same path with different methods; the
 * parameter *names* therefore live with each route, not with the node.
 *
 * Matching walks the trie static-first with backtracking. The trie is a tree and a node at depth d is
 * only ever tried with request segment d, so a request visits each node at most once: the cost is bounded
 * by the trie's size, never exponential.
 */
import { isMethod, MAX_PATH_SEGMENTS, type Method, normalizePath, trimSlashes } from '../shared/path.js';

export interface RouteEntry<T> {
  workflowId: string;
  path: string;
  methods: readonly Method[];
  value: T;
}

export type MatchResult<T> =
  | { kind: 'found'; entry: RouteEntry<T>; params: Record<string, string> }
  // path exists, method not served; allow sorted, includes HEAD when GET is served
  | { kind: 'method_not_allowed'; allow: Method[] }
  | { kind: 'not_found' };

/** Raw request paths longer than this are refused before any work (percent-encoding included). */
export const MAX_REQUEST_PATH_LENGTH = 8192;

interface Route<T> {
  entry: RouteEntry<T>;
  /** Parameter names in path order; zipped with the values captured along the walk. */
  paramNames: readonly string[];
}

interface TrieNode<T> {
  statics: Map<string, TrieNode<T>> | undefined;
  param: TrieNode<T> | undefined;
  /** Routes ending at this node. Keyed by string so request methods need no cast. */
  routes: Map<string, Route<T>>;
}

interface Registered<T> {
  entry: RouteEntry<T>;
  /** Normalized path split into segments (parameter segments keep their `:name`). */
  segments: readonly string[];
}

const NOT_FOUND: { kind: 'not_found' } = Object.freeze({ kind: 'not_found' });

function newNode<T>(): TrieNode<T> {
  return { statics: undefined, param: undefined, routes: new Map() };
}

function isParam(segment: string): boolean {
  return segment.charCodeAt(0) === 58; // ':'
}

/** The route of `node` serving `method`; HEAD falls back to GET. */
function serving<T>(node: TrieNode<T>, method: string): Route<T> | undefined {
  return node.routes.get(method) ?? (method === 'HEAD' ? node.routes.get('GET') : undefined);
}

/** Split and percent-decode a request path; undefined when it cannot match any route. */
function requestSegments(requestPath: string): string[] | undefined {
  if (requestPath.length > MAX_REQUEST_PATH_LENGTH) return undefined;
  const path = trimSlashes(requestPath);
  if (path.length === 0) return undefined;
  // No route is deeper than MAX_PATH_SEGMENTS; one extra piece is enough to know the request is.
  // A path of one segment (n8n-style UUID paths, most paths) is not split: split with a limit took
  // V8's slow path (~0.4 µs a request in the webhook profile).
  const segments = path.includes('/') ? path.split('/', MAX_PATH_SEGMENTS + 1) : [path];
  if (segments.length > MAX_PATH_SEGMENTS) return undefined;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (segment.length === 0) return undefined; // `a//b`
    if (segment.includes('%')) {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        return undefined; // malformed escape or invalid UTF-8
      }
      // NUL cannot be stored in PostgreSQL text/jsonb: refuse it here rather than fail later.
      if (decoded.includes('\0')) return undefined;
      segments[i] = decoded;
    }
    // Dot segments (raw or encoded as %2e) are never resolved and never a route or a parameter value.
    const value = segments[i]!;
    if (value === '.' || value === '..') return undefined;
  }
  return segments;
}

export class TriggerRegistry<T> {
  private root: TrieNode<T> = newNode();
  private byWorkflow = new Map<string, Registered<T>>();

  /**
   * Add or replace the routes of one workflow (removes its previous ones first). Throws Error if another
   * workflow already holds one of the same method+pathShape (callers check conflicts first), or if the
   * entry itself is invalid; the registry is unchanged when it throws.
   */
  set(entry: RouteEntry<T>): void {
    const normalized = normalizePath(entry.path);
    if (!normalized.ok)
      throw new Error(`Invalid webhook path ${JSON.stringify(entry.path)}: ${normalized.error}`);
    if (entry.methods.length === 0) throw new Error(`Workflow ${entry.workflowId} has no webhook methods.`);
    for (const method of entry.methods) {
      if (!isMethod(method)) throw new Error(`Unsupported webhook method ${JSON.stringify(method)}.`);
    }
    const owner = this.conflict(normalized.path, entry.methods, entry.workflowId);
    if (owner !== undefined) {
      throw new Error(
        `Workflow ${owner} already serves ${entry.methods.join('/')} on the path shape of "${normalized.path}".`,
      );
    }

    this.remove(entry.workflowId);
    const segments = normalized.path.split('/');
    const route: Route<T> = {
      entry,
      paramNames: segments.filter(isParam).map((segment) => segment.slice(1)),
    };
    let node = this.root;
    for (const segment of segments) {
      if (isParam(segment)) {
        node.param ??= newNode();
        node = node.param;
      } else {
        node.statics ??= new Map();
        let child = node.statics.get(segment);
        if (child === undefined) {
          child = newNode();
          node.statics.set(segment, child);
        }
        node = child;
      }
    }
    for (const method of entry.methods) node.routes.set(method, route);
    this.byWorkflow.set(entry.workflowId, { entry, segments });
  }

  remove(workflowId: string): void {
    const registered = this.byWorkflow.get(workflowId);
    if (registered === undefined) return;
    this.byWorkflow.delete(workflowId);

    // Descend, remembering the way back so emptied nodes can be pruned bottom-up.
    const trail: Array<{ parent: TrieNode<T>; segment: string }> = [];
    let node: TrieNode<T> | undefined = this.root;
    for (const segment of registered.segments) {
      const parent: TrieNode<T> = node;
      node = isParam(segment) ? parent.param : parent.statics?.get(segment);
      if (node === undefined) return; // cannot happen while the invariants hold
      trail.push({ parent, segment });
    }
    for (const [method, route] of node.routes) {
      if (route.entry.workflowId === workflowId) node.routes.delete(method);
    }
    for (let i = trail.length - 1; i >= 0; i--) {
      if (node.routes.size > 0 || node.param !== undefined || (node.statics?.size ?? 0) > 0) break;
      const { parent, segment } = trail[i]!;
      if (isParam(segment)) parent.param = undefined;
      else parent.statics?.delete(segment);
      node = parent;
    }
  }

  get(workflowId: string): RouteEntry<T> | undefined {
    return this.byWorkflow.get(workflowId)?.entry;
  }

  /**
   * Which other workflow already owns any of `methods` on the shape of `path` (ignoring
   * `exceptWorkflowId`); undefined when free. Only the exact method counts: GET and HEAD on the same
   * path may belong to different workflows (an explicit HEAD route then wins over the GET fallback).
   */
  conflict(path: string, methods: readonly Method[], exceptWorkflowId?: string): string | undefined {
    const normalized = normalizePath(path);
    if (!normalized.ok) return undefined; // nothing can be registered on an invalid path
    let node: TrieNode<T> | undefined = this.root;
    for (const segment of normalized.path.split('/')) {
      node = isParam(segment) ? node.param : node.statics?.get(segment);
      if (node === undefined) return undefined;
    }
    for (const method of methods) {
      const owner = node.routes.get(method)?.entry.workflowId;
      if (owner !== undefined && owner !== exceptWorkflowId) return owner;
    }
    return undefined;
  }

  /**
   * method is the request's upper-case method; requestPath is the raw path after /webhook/ (no query
   * string), may have leading/trailing slashes and percent-encoding.
   *
   * When several routes match the path (static-first order), the first one serving the method wins,
   * so `GET orders/new` reaches a GET `orders/:id` even if another workflow holds POST `orders/new`.
   * A 405's `allow` is the union over every route matching the path: exactly the methods that would
   * succeed.
   */
  match(method: string, requestPath: string): MatchResult<T> {
    const segments = requestSegments(requestPath);
    if (segments === undefined) return NOT_FOUND;
    const values: string[] = [];
    const route = this.find(this.root, segments, 0, method, values);
    if (route !== undefined) {
      const params: Record<string, string> = {};
      const names = route.paramNames;
      for (let i = 0; i < names.length; i++) params[names[i]!] = values[i]!;
      return { kind: 'found', entry: route.entry, params };
    }
    // Slow path (errors only): collect what the path does serve.
    const allowed = new Set<Method>();
    this.collect(this.root, segments, 0, allowed);
    if (allowed.size === 0) return NOT_FOUND;
    if (allowed.has('GET')) allowed.add('HEAD');
    return { kind: 'method_not_allowed', allow: [...allowed].sort() };
  }

  /** Replace everything at once (rebuild from the store on start). Atomic: on a throw nothing changes. */
  replaceAll(entries: Iterable<RouteEntry<T>>): void {
    const next = new TriggerRegistry<T>();
    for (const entry of entries) next.set(entry);
    this.root = next.root;
    this.byWorkflow = next.byWorkflow;
  }

  /** Number of workflows registered. */
  get size(): number {
    return this.byWorkflow.size;
  }

  /** Depth-first, static before param; `values` holds the parameter values of the current branch. */
  private find(
    node: TrieNode<T>,
    segments: readonly string[],
    i: number,
    method: string,
    values: string[],
  ): Route<T> | undefined {
    if (i === segments.length) return serving(node, method);
    const segment = segments[i]!;
    const child = node.statics?.get(segment);
    if (child !== undefined) {
      const route = this.find(child, segments, i + 1, method, values);
      if (route !== undefined) return route;
    }
    if (node.param !== undefined) {
      values.push(segment);
      const route = this.find(node.param, segments, i + 1, method, values);
      if (route !== undefined) return route;
      values.pop(); // backtrack
    }
    return undefined;
  }

  private collect(node: TrieNode<T>, segments: readonly string[], i: number, into: Set<Method>): void {
    if (i === segments.length) {
      for (const method of node.routes.keys()) into.add(method as Method);
      return;
    }
    const child = node.statics?.get(segments[i]!);
    if (child !== undefined) this.collect(child, segments, i + 1, into);
    if (node.param !== undefined) this.collect(node.param, segments, i + 1, into);
  }
}
