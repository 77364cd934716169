import { requestFields } from '../lib/flatten';
import type { TriggerItem } from '../types';
import { FieldTable } from './FieldTable';
import { JsonView } from './JsonView';
import { type Tab, Tabs } from './Tabs';

/**
 * A received request (a trigger item) as tabs: its fields as a table ("Fields of the <label>"), the
 * whole item as JSON, then any `more` tabs. The tab shown is the caller's state, so it stays put
 * when the item changes.
 */
export function RequestTabs({
  item,
  label,
  jsonLabel = label,
  selected,
  onSelect,
  more = [],
}: {
  item: TriggerItem;
  /** What the item is ("Trigger item"): names the tab list, and the table after it. */
  label: string;
  /** The JSON view's name; the label when not given. */
  jsonLabel?: string;
  selected: string;
  onSelect: (id: string) => void;
  more?: Tab[];
}) {
  return (
    <Tabs
      label={label}
      selected={selected}
      onSelect={onSelect}
      tabs={[
        {
          id: 'table',
          label: 'Table',
          content: (
            <FieldTable caption={`Fields of the ${label.toLowerCase()}`} value={requestFields(item)} />
          ),
        },
        { id: 'json', label: 'JSON', content: <JsonView value={item} label={jsonLabel} /> },
        ...more,
      ]}
    />
  );
}
