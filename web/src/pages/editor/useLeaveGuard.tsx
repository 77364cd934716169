/**
 * Unsaved edits are not lost by accident: Ctrl/Cmd+S saves; closing or reloading the tab asks the
 * browser's question; leaving by an in-app link asks ours (save and leave, discard, or stay).
 */
import { useEffect, useRef, useState } from 'react';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { setLeaveGuard } from '../../router';

export function useLeaveGuard(dirty: boolean, save: () => Promise<unknown>) {
  const [leaving, setLeaving] = useState<{ proceed: () => void; busy: boolean } | null>(null);
  /** Set once the user chose to leave, so the navigation that follows is not asked about again. */
  const letGo = useRef(false);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 's') {
        e.preventDefault();
        if (dirty) save();
      }
    };
    const onLeave = (e: BeforeUnloadEvent) => {
      if (dirty) e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('beforeunload', onLeave);
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('beforeunload', onLeave);
    };
  }, [dirty, save]);

  useEffect(() => {
    if (!dirty) return;
    return setLeaveGuard((proceed) => {
      if (letGo.current) return false;
      setLeaving({ proceed, busy: false });
      return true;
    });
  }, [dirty]);

  const leaveNow = (proceed: () => void) => {
    letGo.current = true;
    setLeaving(null);
    proceed();
  };
  const saveAndLeave = async () => {
    if (!leaving) return;
    setLeaving({ ...leaving, busy: true });
    // A save that fails keeps the user here, with its errors at the fields.
    if (await save()) leaveNow(leaving.proceed);
    else setLeaving(null);
  };

  const dialog = (
    <ConfirmDialog
      open={leaving !== null}
      title="Leave with unsaved changes?"
      confirmLabel="Save and leave"
      cancelLabel="Stay"
      other={{
        label: 'Discard changes',
        danger: true,
        onClick: () => leaving && leaveNow(leaving.proceed),
      }}
      busy={leaving?.busy}
      onConfirm={saveAndLeave}
      onCancel={() => setLeaving(null)}
    >
      <p>Your changes to this workflow are not saved. Save them first, or leave and lose them.</p>
    </ConfirmDialog>
  );
  return { dialog };
}
