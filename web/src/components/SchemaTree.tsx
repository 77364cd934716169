import type { JsonSchema } from '../types';
import { short } from '../lib/format';

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  return schema.type ? [schema.type] : [];
}

function example(schema: JsonSchema): unknown {
  const list = schema.examples;
  return Array.isArray(list) && list.length > 0 ? list[list.length - 1] : undefined;
}

function Node({
  name,
  schema,
  optional,
  depth,
}: {
  name: string;
  schema: JsonSchema;
  optional: boolean;
  depth: number;
}) {
  const types = typesOf(schema);
  const props = schema.properties ? Object.entries(schema.properties) : [];
  const required = new Set(schema.required ?? []);
  const items = types.includes('array') ? schema.items : undefined;
  const head = (
    <>
      <span className="tree-name">{name}</span>
      {types.map((t) => (
        <span key={t} className={`type type-${t}`}>
          {t}
        </span>
      ))}
      {optional && <span className="tree-optional">optional</span>}
      {example(schema) !== undefined && <span className="tree-example">{short(example(schema), 60)}</span>}
    </>
  );
  const children = [
    ...props.map(([key, child]) => (
      <Node key={key} name={key} schema={child} optional={!required.has(key)} depth={depth + 1} />
    )),
    ...(items && (items.properties || typesOf(items).includes('array'))
      ? [<Node key="[]" name="[ ]" schema={items} optional={false} depth={depth + 1} />]
      : []),
  ];
  if (children.length === 0) {
    return (
      <li className="tree-leaf">
        <span className="tree-row">{head}</span>
      </li>
    );
  }
  return (
    <li>
      <details open={depth < 1 && name !== 'headers'}>
        <summary className="tree-summary">
          <span className="tree-row">{head}</span>
        </summary>
        <ul className="tree">{children}</ul>
      </details>
    </li>
  );
}

/** The learned JSON Schema as a tree: names, types, examples; objects fold open and shut. */
export function SchemaTree({ schema, samples }: { schema: JsonSchema; samples: number }) {
  const props = schema.properties ? Object.entries(schema.properties) : [];
  if (props.length === 0)
    return <p className="muted">Nothing learned yet: listen for a test event and send a request.</p>;
  const required = new Set(schema.required ?? []);
  return (
    <div className="schema-tree">
      <p className="muted small">
        Learned from {samples} test event{samples === 1 ? '' : 's'}; fields seen in only some of them are
        optional.
      </p>
      <ul className="tree tree-root" aria-label="Learned data structure">
        {props.map(([key, child]) => (
          <Node key={key} name={key} schema={child} optional={!required.has(key)} depth={0} />
        ))}
      </ul>
    </div>
  );
}
