/** `code` (SPEC 7b): JavaScript in CodeMirror, and the console lines of the last test run. */
import { useId } from 'react';
import { CodeEditor } from '../../../components/CodeEditor';
import type { CodeDraft } from '../../../lib/steps/code';
import { type Props, problemAt } from './shared';

export function CodeFields({ step, at, onChange, problems, label, result }: Props<CodeDraft>) {
  const id = useId();
  const error = problemAt(problems, `${at}/source`);
  return (
    <div className="field">
      <CodeEditor
        label={`JavaScript of ${label}`}
        value={step.source}
        onChange={(source) => onChange({ source })}
        field={`${at}/source`}
        error={error}
      />
      <p className="help">
        A function body run on the server in a sandbox (QuickJS): <code>$input</code>, <code>$trigger</code>,{' '}
        <code>$steps</code>, <code>$execution</code> (and inside a For each <code>$item</code>,{' '}
        <code>$index</code>) are copies; <code>return</code> gives the output (JSON); <code>console.log</code>{' '}
        lines are kept. No <code>require</code>, <code>fetch</code> or timers.
      </p>
      {result?.logs && (
        <>
          <p className="label small" id={`${id}-logs`}>
            Console output in the last test run
          </p>
          <pre className="code-logs" role="log" aria-labelledby={`${id}-logs`}>
            {result.logs.join('\n')}
          </pre>
        </>
      )}
    </div>
  );
}
