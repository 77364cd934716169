import type { ReactNode } from 'react';

/**
 * A table's sideways-scrolling box, reachable from the keyboard to scroll it (a table of plain
 * values has nothing focusable inside: WCAG 2.1.1, axe's scrollable-region-focusable) and named
 * like the table.
 */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling box must be reachable from the keyboard to scroll it
    <section className="table-wrap" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}
