import { useState } from 'react';
import { type ApiError, asApiError } from '../api';

/**
 * A call to the API that the user started (create, rotate, delete…): `busy` while one runs, so the
 * page can disable its buttons, and whatever it throws handed to `onError` as an ApiError rather
 * than left as an unhandled rejection. `busyKey` is the row it runs for, when `run` was given one.
 */
export function useAction(onError: (error: ApiError) => void) {
  const [running, setRunning] = useState<{ key: string | undefined } | null>(null);
  const run = async (
    work: () => Promise<void>,
    options: { key?: string; onError?: (error: ApiError) => void } = {},
  ): Promise<void> => {
    setRunning({ key: options.key });
    try {
      await work();
    } catch (err) {
      (options.onError ?? onError)(asApiError(err));
    } finally {
      setRunning(null);
    }
  };
  return { busy: running !== null, busyKey: running?.key, run };
}
