import { useCallback, useEffect, useState } from 'react';
import { type ApiError, api, asApiError, qs } from '../api';
import type { Page } from '../types';

/**
 * A list the API serves a page at a time (`{ items, nextCursor }`): `items` is null until the first
 * page is in, and `more()` appends the next one. The first page loads on mount, unless the page
 * loads it itself alongside something else (`loadOnMount: false`, then `fetchFirst` and `show`).
 * `onError` must keep its identity between renders (a state setter does).
 */
export function usePagedList<T>(
  path: string,
  limit: number,
  onError: (error: ApiError) => void,
  { loadOnMount = true }: { loadOnMount?: boolean } = {},
) {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);

  const fetchFirst = useCallback(() => api<Page<T>>('GET', `${path}${qs({ limit })}`), [path, limit]);
  const show = useCallback((page: Page<T>) => {
    setItems(page.items);
    setCursor(page.nextCursor);
  }, []);

  useEffect(() => {
    if (loadOnMount) fetchFirst().then(show, (err) => onError(asApiError(err)));
  }, [loadOnMount, fetchFirst, show, onError]);

  const more = async () => {
    if (!cursor) return;
    try {
      const page = await api<Page<T>>('GET', `${path}${qs({ limit, cursor })}`);
      setItems((list) => [...(list ?? []), ...page.items]);
      setCursor(page.nextCursor);
    } catch (err) {
      onError(asApiError(err));
    }
  };

  return { items, setItems, hasMore: Boolean(cursor), more, fetchFirst, show };
}
