import { type KeyboardEvent, useEffect, useId, useLayoutEffect, useRef, useState } from 'react';
import { short } from '../lib/format';

export interface PickerField {
  /** Heading of the group ("Trigger", "Step set1"). */
  group: string;
  /** What the user reads: `body.param1`. */
  label: string;
  /** The expression inserted inside `{{ }}`. */
  insert: string;
  /** Text inserted as written instead (a JSON member a sub-workflow's input takes). */
  text?: string;
  type: string;
  example: unknown;
  /** A variable (`$vars`, `$secrets`): there whether or not a test event was captured. */
  variable?: boolean;
}

/**
 * "Insert field": a popup listing the fields learned from test events and earlier steps' outputs.
 * Keyboard: the search box takes focus; arrows move through the list; Enter inserts; Escape closes.
 */
export function FieldPicker({
  fields,
  onPick,
  target,
}: {
  fields: PickerField[];
  onPick: (field: PickerField) => void;
  /** The label of the value a field goes into: the button is named "Insert field into <target>". */
  target: string;
}) {
  // The accessible name starts with the button's visible text (WCAG 2.5.3, label in name).
  const label = `Insert field into ${target}`;
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState('');
  const panelId = useId();
  const buttonRef = useRef<HTMLButtonElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);

  useEffect(() => {
    if (!open) return;
    searchRef.current?.focus();
    const onDown = (event: MouseEvent) => {
      const target = event.target as Node;
      if (!panelRef.current?.contains(target) && !buttonRef.current?.contains(target)) setOpen(false);
    };
    document.addEventListener('mousedown', onDown);
    return () => document.removeEventListener('mousedown', onDown);
  }, [open]);

  // Keep the panel inside the window: it hangs from the button's right edge, which on a phone can be
  // nearer the left edge of the screen than the panel is wide.
  useLayoutEffect(() => {
    const panel = panelRef.current;
    if (!open || !panel) return;
    const place = () => {
      panel.style.transform = '';
      const margin = 8;
      const rect = panel.getBoundingClientRect();
      const width = document.documentElement.clientWidth;
      let shift = 0;
      if (rect.left < margin) shift = margin - rect.left;
      else if (rect.right > width - margin) shift = width - margin - rect.right;
      if (shift !== 0) panel.style.transform = `translateX(${Math.round(shift)}px)`;
    };
    place();
    window.addEventListener('resize', place);
    return () => window.removeEventListener('resize', place);
  }, [open]);

  const close = () => {
    setOpen(false);
    setQuery('');
    buttonRef.current?.focus();
  };

  const q = query.trim().toLowerCase();
  const shown = q
    ? fields.filter((f) => f.label.toLowerCase().includes(q) || f.group.toLowerCase().includes(q))
    : fields;
  const groups = [...new Set(shown.map((f) => f.group))];

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      close();
      return;
    }
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    const options = [...(panelRef.current?.querySelectorAll<HTMLButtonElement>('.picker-option') ?? [])];
    if (options.length === 0) return;
    event.preventDefault();
    const index = options.indexOf(document.activeElement as HTMLButtonElement);
    const next = event.key === 'ArrowDown' ? Math.min(index + 1, options.length - 1) : index - 1;
    if (next < 0) searchRef.current?.focus();
    else options[next]?.focus();
  };

  return (
    <div className="picker">
      <button
        ref={buttonRef}
        type="button"
        className="button small"
        aria-expanded={open}
        aria-controls={open ? panelId : undefined}
        aria-label={label}
        onClick={() => (open ? close() : setOpen(true))}
      >
        <span aria-hidden="true">{'{ }'}</span> Insert field
      </button>
      {open && (
        <div
          ref={panelRef}
          id={panelId}
          className="picker-panel"
          role="dialog"
          aria-label={label}
          onKeyDown={onKeyDown}
          onBlur={(e) => {
            const next = e.relatedTarget as Node | null;
            if (next && !panelRef.current?.contains(next) && !buttonRef.current?.contains(next)) {
              setOpen(false);
              setQuery('');
            }
          }}
        >
          <label className="visually-hidden" htmlFor={`${panelId}-search`}>
            Search fields
          </label>
          <input
            ref={searchRef}
            id={`${panelId}-search`}
            type="search"
            className="input"
            placeholder="Search fields"
            value={query}
            onChange={(e) => setQuery(e.target.value)}
            autoComplete="off"
          />
          {fields.every((f) => f.variable) && (
            <p className="muted small picker-empty">
              No fields yet. Listen for a test event and send a request to the test URL: its fields appear
              here.
            </p>
          )}
          {fields.length === 0 ? null : shown.length === 0 ? (
            <p className="muted small picker-empty">No field matches "{query}".</p>
          ) : (
            <div className="picker-list">
              {groups.map((group) => (
                <fieldset key={group} className="picker-group">
                  <legend>{group}</legend>
                  {shown
                    .filter((f) => f.group === group)
                    .map((f) => (
                      <button
                        key={`${f.group}:${f.insert}`}
                        type="button"
                        className="picker-option"
                        aria-label={`${f.label}, ${f.type}${f.example !== undefined ? `, example ${short(f.example, 40)}` : ''}`}
                        onClick={() => {
                          onPick(f);
                          setOpen(false);
                          setQuery('');
                        }}
                      >
                        <code className="picker-path">{f.label}</code>
                        <span className={`type type-${f.type.split('|')[0]}`}>{f.type}</span>
                        {f.example !== undefined && (
                          <span className="picker-example">{short(f.example, 40)}</span>
                        )}
                      </button>
                    ))}
                </fieldset>
              ))}
            </div>
          )}
        </div>
      )}
    </div>
  );
}
