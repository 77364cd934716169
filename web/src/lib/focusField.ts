/**
 * The links of an error summary: a field is found by the JSON pointer of its problem
 * (`data-field="/steps/1/url"` on the input), or else by the nearest enclosing one
 * (`/steps/1`, the step's heading), focused and scrolled to the middle of the screen.
 */
export function focusField(pointer: string): boolean {
  let at = pointer;
  while (at !== '') {
    const el = document.querySelector<HTMLElement>(`[data-field="${CSS.escape(at)}"]`);
    if (el) {
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: 'center', behavior: 'smooth' });
      return true;
    }
    at = at.slice(0, Math.max(0, at.lastIndexOf('/')));
  }
  return false;
}
