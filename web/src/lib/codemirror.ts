/**
 * The code step's editor: CodeMirror 6 with JavaScript highlighting and a minimal setup. Loaded on
 * demand (components/CodeEditor.tsx imports this module dynamically), so workflows without a code
 * step never download it. Tab is left to move focus (no indentWithTab), so the editor is no
 * keyboard trap; indentation follows Enter.
 */
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import {
  bracketMatching,
  defaultHighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers } from '@codemirror/view';

export interface MountedEditor {
  /** Replace the text when it changed outside the editor (a reload after save). */
  setValue(value: string): void;
  focus(): void;
  destroy(): void;
}

export function mountEditor(
  parent: HTMLElement,
  opts: { value: string; onChange: (value: string) => void; attributes: Record<string, string> },
): MountedEditor {
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
        javascript(),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of(opts.attributes),
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
