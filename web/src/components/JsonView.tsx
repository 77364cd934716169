import { pretty } from '../lib/format';
import { CopyButton } from './CopyButton';

/** Pretty JSON in a <pre>, with a copy button; the group is named by `label`. */
export function JsonView({ value, label }: { value: unknown; label: string }) {
  const text = pretty(value);
  return (
    <figure className="json-view" aria-label={label}>
      <div className="json-view-bar">
        <span className="muted small" aria-hidden="true">
          {label}
        </span>
        <CopyButton text={text} label={`Copy ${label}`} />
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling <pre> must be reachable from the keyboard to scroll it */}
      <pre tabIndex={0}>{text}</pre>
    </figure>
  );
}
