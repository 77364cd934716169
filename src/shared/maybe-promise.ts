/**
 * Sync-or-async, named once. A function that usually answers at once (a pure step, a template
 * without JSONata, a body already read) returns `MaybePromise<T>`: the value itself, or a promise
 * of it when it has to wait. Returning the value spares its caller a microtask turn; on a flat
 * workflow of pure steps that is one turn per step (graphile-worker `PromiseOrDirect`).
 *
 * Errors take one path: `andThen` hands a rejection of its value and a throw of its callback, now or
 * later, to `onError`; without one they reject the promise it returns, never a synchronous throw.
 * A caller of a MaybePromise function puts the call inside `andThen`'s callback to get both the
 * function's throw and its rejection the same way (fastify `lib/handle-request.js` wrapThenable).
 * Browser-safe: no imports.
 */

export type MaybePromise<T> = T | Promise<T>;

/** Whether a MaybePromise is the promise. The one `instanceof Promise` of src/. */
export function isPromise<T>(value: MaybePromise<T>): value is Promise<T> {
  return value instanceof Promise;
}

/**
 * `onValue(value)`: now when `value` is plain (no microtask turn), once it resolves when it is a
 * promise. A rejection of `value`, or a throw or rejection of `onValue`, goes to `onError` when
 * given (what it returns or throws is the answer), else rejects the promise returned. (Not named `then`: a module
 * exporting `then` is a thenable, and `await import()` of it would call it.)
 */
export function andThen<T, U>(
  value: MaybePromise<T>,
  onValue: (value: T) => MaybePromise<U>,
  onError?: (error: unknown) => MaybePromise<U>,
): MaybePromise<U> {
  if (isPromise(value)) return onError ? value.then(onValue).then(undefined, onError) : value.then(onValue);
  try {
    const result = onValue(value);
    return onError && isPromise(result) ? result.then(undefined, onError) : result;
  } catch (error) {
    if (!onError) return Promise.reject(error);
    try {
      return onError(error);
    } catch (again) {
      return Promise.reject(again);
    }
  }
}
