import { type ReactNode, useEffect, useId, useRef } from 'react';

/** A modal question (native <dialog>: focus stays inside, Escape cancels). */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  cancelLabel = 'Cancel',
  other,
  danger,
  busy,
  wide,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ReactNode;
  confirmLabel: string;
  cancelLabel?: string;
  /** A third answer between cancel and confirm (the leave guard's "Discard"). */
  other?: { label: string; onClick: () => void; danger?: boolean };
  danger?: boolean;
  busy?: boolean;
  /** Room for side-by-side content (the publish diff). */
  wide?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      className={wide ? 'dialog dialog-wide' : 'dialog'}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        onCancel();
      }}
    >
      <h2 id={titleId}>{title}</h2>
      <div className="dialog-body">{children}</div>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onCancel}>
          {cancelLabel}
        </button>
        {other && (
          <button
            type="button"
            className={`button${other.danger ? ' danger' : ''}`}
            onClick={other.onClick}
            disabled={busy}
          >
            {other.label}
          </button>
        )}
        <button
          type="button"
          className={`button ${danger ? 'danger' : 'primary'}`}
          onClick={onConfirm}
          disabled={busy}
        >
          {confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
