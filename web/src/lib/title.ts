import { useEffect } from 'react';

/** "Workflows · hookflow": what the page is first, so tabs and history tell pages apart. */
export function pageTitle(...parts: (string | undefined)[]): string {
  return [...parts.filter((p): p is string => Boolean(p?.trim())), 'hookflow'].join(' · ');
}

/** Sets the document title while the page is shown. */
export function useTitle(...parts: (string | undefined)[]): void {
  const title = pageTitle(...parts);
  useEffect(() => {
    document.title = title;
  }, [title]);
}
