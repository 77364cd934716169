import type { ReactNode } from 'react';

/**
 * The table of a list page (workflows, tokens, credentials, versions, executions): its caption for
 * screen readers, the column headings, a last column of row actions (named "Actions" for screen
 * readers only; none with `actions={false}`), the rows, a "Show more" button while the API has
 * another page, then `footer` — in the scrolling wrapper that keeps a wide table inside a phone's screen.
 */
export function ListTable({
  caption,
  columns,
  className,
  actions = true,
  onMore,
  footer,
  children,
}: {
  caption: string;
  columns: string[];
  /** Added to `data-table`. */
  className?: string;
  /** Whether the rows end with a cell of actions. */
  actions?: boolean;
  /** Shows "Show more"; undefined when there is no next page. */
  onMore?: (() => void) | undefined;
  footer?: ReactNode;
  /** The rows (`<tr>`). */
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className={className ? `data-table ${className}` : 'data-table'}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
      {onMore && (
        <button type="button" className="button" onClick={onMore}>
          Show more
        </button>
      )}
      {footer}
    </div>
  );
}

/** A row's action button: it shows `action`, and its accessible name says which row ("Delete Orders"). */
export function RowAction({
  action,
  row,
  danger,
  disabled,
  onClick,
}: {
  action: string;
  /** The row's name. */
  row: string;
  /** A destructive action (delete, revoke): outlined in red. */
  danger?: boolean;
  disabled?: boolean;
  onClick: () => void;
}) {
  return (
    <button
      type="button"
      className={danger ? 'button small danger-outline' : 'button small'}
      onClick={onClick}
      disabled={disabled}
      aria-label={`${action} ${row}`}
    >
      {action}
    </button>
  );
}
