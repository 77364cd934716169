/**
 * The form component of each step type in the registry (lib/steps/index.ts has the rest of its
 * entry), and the fields whose problems it shows in place (the others are listed below the step).
 * A type missing here is a type error; a type with no form is edited as JSON (StepSettings).
 */
import type { ComponentType } from 'react';
import type { Drafts, FormType, StepDraft } from '../../../lib/steps/types';
import { CodeFields } from './CodeStep';
import { EmailFields } from './EmailStep';
import { ForEachFields } from './ForEachStep';
import { HttpFields } from './HttpStep';
import { IfFields } from './IfStep';
import { RespondFields } from './RespondStep';
import { SetFields } from './SetStep';
import { Expr, type Props } from './shared';
import { SqlFields } from './SqlStep';
import { StoreFields } from './StoreStep';
import { SwitchFields } from './SwitchStep';
import { WaitFields } from './WaitStep';
import { WorkflowFields } from './WorkflowStep';

export interface StepFormView<D> {
  Form: ComponentType<Props<D>>;
  /** The step fields whose problems the form shows at the field (`*`: any index). */
  inline: readonly string[];
}

const VIEWS: { [T in FormType]: StepFormView<Drafts[T]> } = {
  set: { Form: SetFields, inline: [] },
  filter: {
    Form: (props) => (
      <Expr {...props} k="condition" title="Condition" placeholder="{{ body.amount > 100 }}" />
    ),
    inline: ['condition'],
  },
  http: { Form: HttpFields, inline: ['url', 'credential', 'retry', 'body', 'timeoutMs'] },
  email: {
    Form: EmailFields,
    inline: [
      'to',
      'cc',
      'bcc',
      'replyTo',
      'subject',
      'text',
      'html',
      'attachments',
      'credential',
      'retry',
      'timeoutMs',
    ],
  },
  respond: { Form: RespondFields, inline: ['status', 'body'] },
  if: { Form: IfFields, inline: ['condition'] },
  switch: { Form: SwitchFields, inline: ['value', 'cases/*/equals', 'cases/*/when'] },
  forEach: { Form: ForEachFields, inline: ['items'] },
  code: { Form: CodeFields, inline: ['source'] },
  wait: {
    Form: WaitFields,
    inline: ['seconds', 'until', 'timeoutSeconds', 'workflowId', 'match', 'equals'],
  },
  fail: {
    Form: (props) => (
      <Expr
        {...props}
        k="message"
        title="Message"
        placeholder="Unknown event {{ headers.`x-github-event` }}"
      />
    ),
    inline: ['message'],
  },
  sql: { Form: SqlFields, inline: ['credential', 'query', 'params', 'maxRows', 'timeoutMs'] },
  store: { Form: StoreFields, inline: ['key', 'value', 'by', 'ttlSeconds'] },
  workflow: { Form: WorkflowFields, inline: ['workflowId', 'input', 'wait'] },
};

/** The form of a step's type, or undefined for a type with no form. */
export function viewFor(step: StepDraft): StepFormView<StepDraft> | undefined {
  return Object.hasOwn(VIEWS, step.type)
    ? (VIEWS[step.type as FormType] as unknown as StepFormView<StepDraft>)
    : undefined;
}
