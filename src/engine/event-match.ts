/**
 * A `wait` for an event's `match` (SPEC 7g): a template evaluated against another workflow's
 * trigger item (`$` and `$trigger` are that item), whose value, as a key (`keyText`: strings as
 * they are, other JSON as its text), must equal the wait's `equals`. Compiled once per text.
 */
import { keyText } from './concurrency.js';
import { compileTemplate, render, type Template } from './expressions.js';

const MAX_CACHED = 500;
const compiled = new Map<string, Template>();

function templateOf(match: string): Template {
  let template = compiled.get(match);
  if (!template) {
    template = compileTemplate(match, '/match').template;
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
    compiled.set(match, template);
  }
  return template;
}

/** The key `match` gives for `item`, or undefined when it gives nothing or fails (it then matches nothing). */
export async function matchKey(
  match: string,
  item: unknown,
  workflowId: string,
): Promise<string | undefined> {
  try {
    const value = await render(templateOf(match), {
      input: item,
      trigger: item,
      steps: {},
      execution: { id: '', mode: 'production', workflowId, attempt: 1 },
    });
    return keyText(value);
  } catch {
    return undefined;
  }
}
