/**
 * Where the `{{ … }}` expressions of a configuration string are. Dependency-free, so the web UI
 * uses the very same rules for its inline errors and previews.
 */
/** Literal text, or the source of one `{{ … }}` and where it starts in the text. */
export type Piece = string | { source: string; offset: number };

/**
 * Split text into literal pieces and `{{ … }}` sources. The closing `}}` is the first one outside
 * JSONata strings, comments and braces, so `{{ {"a": {"b": 1}} }}` is one expression.
 */
export function splitTemplate(text: string): { parts: Piece[] } | { error: string } {
  const parts: Piece[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open === -1) {
      parts.push(text.slice(i));
      break;
    }
    if (open > i) parts.push(text.slice(i, open));
    const close = findClose(text, open + 2);
    if (close === -1) return { error: `The "{{" at position ${open + 1} has no closing "}}".` };
    parts.push({ source: text.slice(open + 2, close), offset: open + 2 });
    i = close + 2;
  }
  return { parts };
}

function findClose(text: string, from: number): number {
  let depth = 0;
  for (let j = from; j < text.length; j++) {
    const c = text[j];
    if (c === '"' || c === "'" || c === '`') {
      // Strings take backslash escapes; backtick names do not.
      for (j++; j < text.length && text[j] !== c; j++) if (c !== '`' && text[j] === '\\') j++;
    } else if (c === '/' && text[j + 1] === '*') {
      const end = text.indexOf('*/', j + 2);
      if (end === -1) return -1;
      j = end + 1;
    } else if (c === '{') {
      depth++;
    } else if (c === '}') {
      if (depth === 0 && text[j + 1] === '}') return j;
      if (depth > 0) depth--;
    }
  }
  return -1;
}
