import { type ReactNode, useEffect, useRef } from 'react';

/**
 * A full-screen sheet on a narrow screen: a native modal <dialog> (focus stays inside, Escape
 * closes), for what sits in a side panel on a wide one.
 */
export function Sheet({
  id,
  labelledBy,
  onClose,
  children,
}: {
  id: string;
  labelledBy: string;
  onClose: () => void;
  children: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog
      ref={ref}
      id={id}
      className="sheet"
      aria-labelledby={labelledBy}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      {children}
    </dialog>
  );
}
