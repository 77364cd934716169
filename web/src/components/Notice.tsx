/** A passing message of what just happened ("Revoked …", "Signed out …"), read out by screen readers. */
export function Notice({ text }: { text: string | null | undefined }) {
  if (!text) return null;
  return (
    <p className="notice" role="status">
      {text}
    </p>
  );
}
