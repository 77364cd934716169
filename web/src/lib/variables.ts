/**
 * Variables in the editor (SPEC 7e): the field picker offers `$vars.NAME` everywhere and
 * `$secrets.NAME` in the fields a step type sends secrets from; previews read a variable's real
 * value and a secret as "***" (its value never reaches the browser). The workflow editor provides
 * the list and where secrets are allowed; outside it (no provider) there are none.
 */
import { createContext, useContext } from 'react';
import type { PickerField } from '../components/FieldPicker';
import { catalogAllowsSecrets } from '../../../src/shared/step-catalog';
import type { StepAt } from './stepTree';

export interface Variable {
  name: string;
  /** "***" for a secret. */
  value: string;
  secret: boolean;
  createdAt: string;
  updatedAt: string;
}

/** How an expression reads it: `{{ $vars.NAME }}`, or `{{ $secrets.NAME }}` for a secret. */
export function variableReference(v: Pick<Variable, 'name' | 'secret'>): string {
  return `{{ ${v.secret ? '$secrets' : '$vars'}.${v.name} }}`;
}

export interface EditorVariables {
  variables: readonly Variable[];
  /** Whether the value at this JSON pointer of the workflow (`/steps/1/params/0`) may use `$secrets`. */
  secretsAllowed: (field: string | undefined) => boolean;
}

export const NO_VARIABLES: EditorVariables = { variables: [], secretsAllowed: () => false };

export const VariablesContext = createContext<EditorVariables>(NO_VARIABLES);

export function useEditorVariables(): EditorVariables {
  return useContext(VariablesContext);
}

/**
 * Where `$secrets` may be used, from the workflow's steps: the innermost step holding the field,
 * and whether its type takes secrets there (shared/step-catalog.ts, the engine's own list).
 */
export function secretsAllowedIn(tree: readonly StepAt[]): EditorVariables['secretsAllowed'] {
  return (field) => {
    if (!field) return false;
    let holder: StepAt | undefined;
    for (const t of tree)
      if (field.startsWith(`${t.at}/`) && (!holder || t.at.length > holder.at.length)) holder = t;
    return holder !== undefined && catalogAllowsSecrets(holder.step.type, field.slice(holder.at.length));
  };
}

/** `$vars` as an expression sees it: name → value of each variable that is not secret. */
export function varsOf(variables: readonly Variable[]): Record<string, string> {
  return Object.fromEntries(variables.filter((v) => !v.secret).map((v) => [v.name, v.value]));
}

/** `$secrets` as a preview sees it: every secret's name, its value "***". */
export function maskedSecretsOf(variables: readonly Variable[]): Record<string, string> {
  return Object.fromEntries(variables.filter((v) => v.secret).map((v) => [v.name, '***']));
}

/** The picker's entries for the variables; secrets only where `secrets` is true. */
export function variableFields(variables: readonly Variable[], secrets: boolean): PickerField[] {
  return variables
    .filter((v) => secrets || !v.secret)
    .map((v) => {
      const at = v.secret ? '$secrets' : '$vars';
      return {
        group: v.secret ? 'Secrets ($secrets)' : 'Variables ($vars)',
        label: `${at}.${v.name}`,
        insert: `${at}.${v.name}`,
        type: 'string',
        example: v.value,
        variable: true,
      };
    });
}

/** Whether a text names `$secrets` (in an expression or not: a hint, the server decides). */
export function namesSecrets(text: string): boolean {
  return /\$secrets\b/.test(text);
}
