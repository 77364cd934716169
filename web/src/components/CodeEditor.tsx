import { useEffect, useId, useRef, useState } from 'react';
import type { EditorLanguage, MountedEditor, SyntaxProblem } from '../lib/codemirror';

/**
 * JavaScript source (or SQL: `language`) with CodeMirror 6 (lib/codemirror.ts, loaded on first
 * use). Until it has loaded — or if it cannot — a plain textarea edits the same text.
 */
export function CodeEditor({
  label,
  value,
  onChange,
  field,
  error,
  language = 'javascript',
  help,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  /** JSON pointer of the value in the workflow, for the links of the error summary. */
  field?: string;
  error?: string;
  /** Highlighting (and, for JavaScript, the live syntax check); the editor is made again when it changes. */
  language?: EditorLanguage;
  /** Said with the field (its aria-describedby), below it. */
  help?: string;
}) {
  const id = useId();
  const host = useRef<HTMLDivElement>(null);
  const fallback = useRef<HTMLTextAreaElement>(null);
  const editor = useRef<MountedEditor | null>(null);
  const [ready, setReady] = useState(false);
  const [syntax, setSyntax] = useState<SyntaxProblem | null>(null);
  const latest = useRef({ value, onChange });
  latest.current = { value, onChange };
  const describedBy = error || syntax || help ? `${id}-notes` : undefined;

  useEffect(() => {
    let cancelled = false;
    import('../lib/codemirror').then(
      ({ mountEditor }) => {
        if (cancelled || !host.current) return;
        const attributes: Record<string, string> = {
          'aria-labelledby': `${id}-label`,
          'aria-multiline': 'true',
          // The field's error or the syntax check, whichever is shown (the element is always there).
          'aria-describedby': `${id}-notes`,
        };
        if (field) attributes['data-field'] = field;
        // Someone typing in the textarea while the editor loaded keeps typing, in the editor.
        const typing = document.activeElement === fallback.current && fallback.current !== null;
        editor.current = mountEditor(host.current, {
          value: latest.current.value,
          onChange: (v) => latest.current.onChange(v),
          attributes,
          onSyntax: setSyntax,
          language,
        });
        setReady(true);
        if (typing) editor.current.focus();
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
      editor.current?.destroy();
      editor.current = null;
    };
  }, [id, field, language]);

  useEffect(() => {
    editor.current?.setValue(value);
  }, [value]);

  return (
    <div className={`code-editor${error ? ' invalid' : ''}`}>
      <label id={`${id}-label`} htmlFor={ready ? undefined : `${id}-text`} className="label">
        {label}
      </label>
      <div ref={host} className="code-editor-host" data-testid="code-editor" />
      {!ready && (
        <textarea
          ref={fallback}
          id={`${id}-text`}
          className="input mono"
          rows={8}
          value={value}
          data-field={field}
          aria-invalid={error ? true : undefined}
          aria-describedby={describedBy}
          spellCheck={false}
          onChange={(e) => onChange(e.target.value)}
        />
      )}
      <div id={`${id}-notes`}>
        {help && <p className="help">{help}</p>}
        {error && <p className="field-error">{error}</p>}
        {!error && syntax && (
          <p className="field-error" data-testid="code-syntax">
            {syntax.message}, line {syntax.line}, column {syntax.column}.
          </p>
        )}
      </div>
    </div>
  );
}
