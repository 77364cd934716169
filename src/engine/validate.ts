/**
 * Workflow validation on save, and the step-schema checks the step loop shares with it: known step
 * types, names unique in the whole workflow, each step's fields against its type's schema (TypeBox,
 * compiled once per type), every `{{ … }}` compiles, nested step lists at most MAX_NESTING levels
 * and MAX_STEPS in all. Fields are JSON pointers from the workflow root.
 */
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { FieldError } from '../errors.js';
import type { Step } from '../model/workflow.js';
import { codeSandboxLoaded, loadCodeSandbox } from './code-sandbox.js';
import { stepLists, withoutLists } from '../shared/step-lists.js';
import { compileTemplate } from './expressions.js';
import { STEP_TYPES, type StepRegistry } from './steps/index.js';
import { renderedSchema, type StepType, secretsAllowedIn } from './steps/types.js';

/**
 * Step lists nest at most this deep (the top-level list is level 1): deeper workflows are refused
 * on save. Ten levels are far more than a readable workflow uses, and bound the recursion of the
 * engine, the validation and the editor.
 */
export const MAX_NESTING = 10;
/** Steps in a whole workflow, nested ones included. */
export const MAX_STEPS = 1_000;

export interface Validators {
  /** The stored configuration, checked on save (an `Expr` field may hold a `{{ … }}` text). */
  stored: ReturnType<typeof Compile>;
  /** The rendered configuration, checked before each run of the step (`renderedSchema`). */
  rendered: ReturnType<typeof Compile>;
}

/** A step's own fields: everything but `name` and `type`. */
export function stepConfig(step: Step): Record<string, unknown> {
  const { name: _name, type: _type, ...config } = step;
  return config;
}

const validatorCache = new WeakMap<StepType<TSchema>, Validators>();

export function validators(type: StepType<TSchema>): Validators {
  let v = validatorCache.get(type);
  if (!v) {
    v = { stored: Compile(type.config), rendered: Compile(renderedSchema(type.config) as TSchema) };
    validatorCache.set(type, v);
  }
  return v;
}

/** TypeBox errors as FieldErrors: one per field, with the field named (not "must have required properties"). */
export function schemaErrors(validator: ReturnType<typeof Compile>, value: unknown): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  const add = (field: string, message: string) => {
    if (seen.has(field)) return;
    seen.add(field);
    out.push({ field, message });
  };
  for (const e of validator.Errors(value)) {
    const params = e.params as { additionalProperties?: string[]; requiredProperties?: string[] };
    if (e.keyword === 'additionalProperties') {
      for (const p of params.additionalProperties ?? [])
        add(`${e.instancePath}/${p}`, 'is not a known field');
    } else if (e.keyword === 'required') {
      for (const p of params.requiredProperties ?? []) add(`${e.instancePath}/${p}`, 'is required');
    } else if (e.keyword !== 'boolean' && e.keyword !== 'propertyNames') {
      add(e.instancePath, e.message);
    }
  }
  return out;
}

/**
 * Workflow validation (on save): known step types, names unique in the whole workflow, each
 * step's fields against its type's schema, every `{{ … }}` compiles, and the same for the steps
 * nested in if/switch/forEach (at most MAX_NESTING levels, MAX_STEPS in all). Fields are JSON
 * pointers from the workflow root (`/steps/0/cases/1/steps/0/condition`). A workflow with a
 * `code` step needs the code sandbox loaded (`validateStepsAsync` does it) to check its syntax.
 * `types`: the step types known (the built-in ones unless a test adds its own).
 */
export function validateSteps(steps: readonly Step[], types: StepRegistry = STEP_TYPES): FieldError[] {
  const errors: FieldError[] = [];
  const count = { steps: 0 };
  validateList(steps, '/steps', 1, { seen: new Set<string>(), count, errors, types });
  if (count.steps > MAX_STEPS)
    errors.unshift({
      field: '/steps',
      message: `holds ${count.steps} steps with the nested ones; at most ${MAX_STEPS}`,
    });
  return errors;
}

const SAFE_NAME = { minLength: 1, maxLength: 128 };

/** What validating a workflow's lists shares: the names so far, the steps counted, the errors. */
interface Validation {
  seen: Set<string>;
  count: { steps: number };
  errors: FieldError[];
  types: StepRegistry;
}

function validateList(steps: readonly unknown[], pointer: string, level: number, v: Validation): void {
  const { seen, count, errors, types } = v;
  steps.forEach((value, i) => {
    const base = `${pointer}/${i}`;
    count.steps++;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      errors.push({ field: base, message: 'must be a step (an object with name and type)' });
      return;
    }
    const step = value as Step;
    // Nested steps are checked here (the API's schema checks only the top level's name and type).
    if (
      typeof step.name !== 'string' ||
      step.name.length < SAFE_NAME.minLength ||
      step.name.length > SAFE_NAME.maxLength
    ) {
      errors.push({ field: `${base}/name`, message: 'is required: a text of 1 to 128 characters' });
      return;
    }
    if (seen.has(step.name))
      errors.push({
        field: `${base}/name`,
        message: `duplicate step name "${step.name}" (names are unique in the whole workflow, nested steps included)`,
      });
    seen.add(step.name);
    if (typeof step.type !== 'string') {
      errors.push({ field: `${base}/type`, message: 'is required' });
      return;
    }
    const type = types.get(step.type);
    if (!type) {
      errors.push({
        field: `${base}/type`,
        message: `unknown step type "${step.type}" (known: ${[...types.keys()].join(', ')})`,
      });
      return;
    }
    const config = stepConfig(step);
    const { stored } = validators(type);
    if (!stored.Check(config)) {
      for (const e of schemaErrors(stored, config))
        errors.push({ field: `${base}${e.field}`, message: e.message });
      return;
    }
    for (const e of type.check?.(config) ?? [])
      errors.push({ field: `${base}${e.field}`, message: e.message });
    const compiled = compileTemplate(ownConfig(step, type), '', undefined, (field) =>
      secretsAllowedIn(type, field),
    );
    for (const e of compiled.errors) {
      errors.push({ field: `${base}${e.field}`, message: `expression does not compile: ${e.message}` });
    }
    for (const field of compiled.secretsMisused)
      errors.push({ field: `${base}${field}`, message: secretsMisusedMessage(types) });
    for (const list of stepLists(step, type.lists)) {
      if (level >= MAX_NESTING) {
        if (list.steps.length > 0)
          errors.push({
            field: `${base}${list.field}`,
            message: `nests steps more than ${MAX_NESTING} levels deep (the most hookflow allows)`,
          });
        continue;
      }
      validateList(list.steps, `${base}${list.field}`, level + 1, v);
    }
  });
}

/** Where `$secrets` may be used, as the message of a field that uses it elsewhere says. */
function secretsMisusedMessage(types: StepRegistry): string {
  const places = [...types.values()]
    .filter((t) => t.secretFields?.length)
    .map(
      (t) => `a ${t.type} step's ${t.secretFields!.map((f) => f.slice(1).replaceAll('/', '.')).join(', ')}`,
    );
  return `uses $secrets, which only ${places.join('; ')} may use (a secret is sent where it is needed and shown nowhere); use $vars for a variable that is not secret`;
}

/** What of a step is a template: its fields but nested step lists and `literal` fields. */
function ownConfig(step: Step, type: StepType<TSchema>): Record<string, unknown> {
  const config = withoutLists(stepConfig(step), type.lists);
  for (const k of type.literal ?? []) delete config[k];
  return config;
}

/** validateSteps, after loading the code sandbox when a `code` step needs its syntax checked. */
export async function validateStepsAsync(
  steps: readonly Step[],
  types: StepRegistry = STEP_TYPES,
): Promise<FieldError[]> {
  if (!codeSandboxLoaded() && hasCodeStep(steps, types)) await loadCodeSandbox();
  return validateSteps(steps, types);
}

function hasCodeStep(steps: readonly unknown[], types: StepRegistry, level = 1): boolean {
  if (level > MAX_NESTING + 1) return false;
  return steps.some((s) => {
    if (typeof s !== 'object' || s === null) return false;
    const step = s as Step;
    if (step.type === 'code') return true;
    return stepLists(step, types.get(step.type)?.lists).some((l) => hasCodeStep(l.steps, types, level + 1));
  });
}
