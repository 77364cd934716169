/**
 * The code step's editor: CodeMirror 6 with JavaScript highlighting and a minimal setup. Loaded on
 * demand (components/CodeEditor.tsx imports this module dynamically), so workflows without a code
 * step never download it. Tab is left to move focus (no indentWithTab), so the editor is no
 * keyboard trap; indentation follows Enter.
 */
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import { MySQL, PostgreSQL, sql, StandardSQL } from '@codemirror/lang-sql';
import {
  bracketMatching,
  defaultHighlightStyle,
  ensureSyntaxTree,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import { type Diagnostic, linter, lintGutter } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';
import { StyleModule } from 'style-mod';

/**
 * CodeMirror's styles under the page's CSP (`style-src 'self'`, no inline styles). style-mod puts a
 * view's CSS in a `<style>` tag when mounting into a document, which that CSP refuses (the gutter
 * then stacks above the code, nothing is highlighted); into a shadow root it uses a constructed
 * stylesheet (`adoptedStyleSheets`), which CSP does not govern. This sends the document's mount
 * the constructed way too, through a stand-in root that has no `head` and forwards
 * `adoptedStyleSheets` to the document, so style-mod's own ordering of the modules still applies.
 * Adopted sheets come after the page's stylesheets in the cascade: flow.css overrides CodeMirror
 * with more specific selectors.
 */
function adoptStylesInDocument(): void {
  if (typeof CSSStyleSheet === 'undefined' || !('adoptedStyleSheets' in Document.prototype)) return;
  const mount = StyleModule.mount;
  const standIn = {
    ownerDocument: document,
    get adoptedStyleSheets() {
      return document.adoptedStyleSheets;
    },
    set adoptedStyleSheets(sheets: CSSStyleSheet[]) {
      document.adoptedStyleSheets = sheets;
    },
  } as unknown as ShadowRoot;
  StyleModule.mount = (root, modules, options) => mount(root === document ? standIn : root, modules, options);
}
// Once, when this module loads (on the first code editor shown), before any view mounts its styles.
adoptStylesInDocument();

/**
 * Text typed over a selection is put in by CodeMirror, not by the browser: Chrome's own editing,
 * replacing a selection across highlighted spans, writes `style` attributes to keep their look,
 * which the CSP refuses (a console error a keystroke; CodeMirror redraws the line anyway). An
 * empty selection, and IME composition, stay with the browser as CodeMirror expects.
 */
const replaceSelectionTyped = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== 'insertText' || event.data === null || event.isComposing) return false;
    if (view.state.selection.ranges.every((r) => r.empty)) return false;
    event.preventDefault();
    view.dispatch(view.state.replaceSelection(event.data), { userEvent: 'input.type', scrollIntoView: true });
    return true;
  },
});

export interface MountedEditor {
  /** Replace the text when it changed outside the editor (a reload after save). */
  setValue(value: string): void;
  focus(): void;
  destroy(): void;
}

/** Where the source first stops parsing, as a person counts: line and column from 1. */
export interface SyntaxProblem {
  line: number;
  column: number;
  message: string;
}

/**
 * The live syntax check: the places the JavaScript parser (Lezer, which highlights the code) could
 * not parse. Without eval (the CSP forbids it) and without running anything; the parser is lenient,
 * so this catches broken code as typed (a missing bracket, `const = 1`), not every early error —
 * saving validates the source in the sandbox and reports the rest.
 */
function syntaxProblems(state: EditorState): Diagnostic[] {
  const tree = ensureSyntaxTree(state, state.doc.length, 200);
  if (!tree) return [];
  const found: Diagnostic[] = [];
  tree.iterate({
    enter(node) {
      if (!node.type.isError || found.length >= 5) return;
      const to = Math.min(Math.max(node.to, node.from + 1), state.doc.length);
      found.push({
        from: node.from,
        to,
        severity: 'error',
        message: 'Syntax error: the code does not parse here',
      });
    },
  });
  return found;
}

export type EditorLanguage = 'javascript' | 'sql' | 'postgres' | 'mysql';

const SQL_DIALECTS = { sql: StandardSQL, postgres: PostgreSQL, mysql: MySQL };

export function mountEditor(
  parent: HTMLElement,
  opts: {
    value: string;
    onChange: (value: string) => void;
    attributes: Record<string, string>;
    /** The first syntax problem after each change (null when the code parses). */
    onSyntax?: (problem: SyntaxProblem | null) => void;
    /**
     * JavaScript (the default, with the live syntax check) or SQL in a dialect (an `sql` step's
     * query: highlighted only; the database checks it when the step runs).
     */
    language?: EditorLanguage;
  },
): MountedEditor {
  const report = (state: EditorState, problems: readonly Diagnostic[]) => {
    const first = problems[0];
    if (!first) return opts.onSyntax?.(null);
    const line = state.doc.lineAt(first.from);
    opts.onSyntax?.({ line: line.number, column: first.from - line.from + 1, message: first.message });
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: opts.value,
      extensions: [
        lineNumbers(),
        history(),
        drawSelection(),
        indentOnInput(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        keymap.of([...defaultKeymap, ...historyKeymap]),
        ...(opts.language && opts.language !== 'javascript'
          ? [sql({ dialect: SQL_DIALECTS[opts.language], upperCaseKeywords: false })]
          : [
              javascript(),
              lintGutter(),
              linter(
                (view) => {
                  const problems = syntaxProblems(view.state);
                  report(view.state, problems);
                  return problems;
                },
                { delay: 300 },
              ),
            ]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of(opts.attributes),
        replaceSelectionTyped,
        EditorView.updateListener.of((u) => {
          if (u.docChanged) opts.onChange(u.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    setValue(value) {
      const current = view.state.doc.toString();
      if (current !== value) view.dispatch({ changes: { from: 0, to: current.length, insert: value } });
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
}
