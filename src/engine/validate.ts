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
import { compileTemplate, defineEntry, type Template } from './expressions.js';
import { FLOW_TYPES, nestedLists } from './steps/flow.js';
import { STEP_TYPES, stepType } from './steps/index.js';
import { renderedSchema, type StepType } from './steps/types.js';

/**
 * Step lists nest at most this deep (the top-level list is level 1): deeper workflows are refused
 * on save. Ten levels are far more than a readable workflow uses, and bound the recursion of the
 * engine, the validation and the editor.
 */
export const MAX_NESTING = 10;
/** Steps in a whole workflow, nested ones included. */
export const MAX_STEPS = 1_000;

export interface Validators {
  stored: ReturnType<typeof Compile>;
  rendered: ReturnType<typeof Compile>;
  /** The schema `rendered` checks (`renderedSchema` of the type's), as JSON Schema. */
  renderedSchema: unknown;
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
    const rendered = renderedSchema(type.config);
    v = { stored: Compile(type.config), rendered: Compile(rendered as TSchema), renderedSchema: rendered };
    validatorCache.set(type, v);
  }
  return v;
}

/**
 * Whether a step's rendered configuration must be checked on every run (the engine checks it after
 * rendering). Not when every expression in `template` lands where the rendered schema takes any
 * value (`{}`: `set`'s field values) and the configuration passes that schema now with a
 * placeholder for each expression: then no run can render one the check refuses. (`set`'s check
 * tested a regular expression per field name, every run: 0.5 µs of a ~6 µs run of the bench
 * workflow.) Any schema keyword around an expression that this does not know keeps the check; so
 * does a fixed part that the current schema refuses (a version saved by an older hookflow): each
 * run then fails as before.
 */
export function renderedCheckNeeded(
  type: StepType<TSchema>,
  template: Template,
  literal: readonly [string, unknown][] | undefined,
): boolean {
  const v = validators(type);
  if (!takesAnyRendered(template, v.renderedSchema)) return true;
  const sample = withPlaceholders(template);
  if (literal && typeof sample === 'object' && sample !== null)
    for (const [k, value] of literal) (sample as Record<string, unknown>)[k] = value;
  return !v.rendered.Check(sample);
}

/** Keywords of an object or array schema that only constrain keys or counts, fixed when saved. */
const OBJECT_KEYWORDS = new Set([
  'type',
  'properties',
  'patternProperties',
  'additionalProperties',
  'required',
  'minProperties',
  'maxProperties',
]);
const ARRAY_KEYWORDS = new Set(['type', 'items', 'minItems', 'maxItems']);

/** Whether whatever `template`'s expressions render, it fits `schema` where they land. */
function takesAnyRendered(template: Template, schema: unknown): boolean {
  if (template.kind === 'literal') return true;
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Record<string, unknown>;
  const keywords = Object.keys(s);
  switch (template.kind) {
    case 'expression':
      return keywords.length === 0;
    case 'text':
      return keywords.length === 0 || (keywords.length === 1 && s.type === 'string');
    case 'array':
      return (
        keywords.every((k) => ARRAY_KEYWORDS.has(k)) &&
        template.items.every((item) => takesAnyRendered(item, s.items))
      );
    case 'object': {
      // Rendering keeps every key, an expression that found nothing as undefined, which `required`
      // takes as present (TypeBox): keys and their number are fixed, as saved.
      if (!keywords.every((k) => OBJECT_KEYWORDS.has(k))) return false;
      return template.entries.every(([key, value]) => takesAnyRendered(value, entrySchema(s, key)));
    }
  }
}

/** The schema an object schema gives the entry `key` (undefined when that is not plain). */
function entrySchema(s: Record<string, unknown>, key: string): unknown {
  const properties = s.properties as Record<string, unknown> | undefined;
  if (properties && Object.hasOwn(properties, key)) return properties[key];
  const patterns = Object.entries((s.patternProperties as Record<string, unknown> | undefined) ?? {});
  if (patterns.length > 1) return undefined;
  if (patterns.length === 1) return new RegExp(patterns[0]![0]).test(key) ? patterns[0]![1] : undefined;
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
}

/**
 * The template with each expression replaced by a value its place takes (`takesAnyRendered`): null,
 * or '' for text. Keys and counts stay as every run renders them.
 */
function withPlaceholders(template: Template): unknown {
  switch (template.kind) {
    case 'literal':
      return template.value;
    case 'expression':
      return null;
    case 'text':
      return '';
    case 'array':
      return template.items.map(withPlaceholders);
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, value] of template.entries) defineEntry(out, key, withPlaceholders(value));
      return out;
    }
  }
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
 */
export function validateSteps(steps: readonly Step[]): FieldError[] {
  const errors: FieldError[] = [];
  const count = { steps: 0 };
  validateList(steps, '/steps', 1, new Set<string>(), count, errors);
  if (count.steps > MAX_STEPS)
    errors.unshift({
      field: '/steps',
      message: `holds ${count.steps} steps with the nested ones; at most ${MAX_STEPS}`,
    });
  return errors;
}

const SAFE_NAME = { minLength: 1, maxLength: 128 };

function validateList(
  steps: readonly unknown[],
  pointer: string,
  level: number,
  seen: Set<string>,
  count: { steps: number },
  errors: FieldError[],
): void {
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
    const type = stepType(step.type);
    if (!type) {
      errors.push({
        field: `${base}/type`,
        message: `unknown step type "${step.type}" (known: ${[...STEP_TYPES.keys()].join(', ')})`,
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
    for (const e of compileTemplate(ownConfig(step, type)).errors) {
      errors.push({ field: `${base}${e.field}`, message: `expression does not compile: ${e.message}` });
    }
    if (!FLOW_TYPES.has(step.type)) return;
    for (const list of nestedLists(step)) {
      if (level >= MAX_NESTING) {
        if (list.steps.length > 0)
          errors.push({
            field: `${base}${list.field}`,
            message: `nests steps more than ${MAX_NESTING} levels deep (the most hookflow allows)`,
          });
        continue;
      }
      validateList(list.steps, `${base}${list.field}`, level + 1, seen, count, errors);
    }
  });
}

/** What of a step is a template: its fields but nested step lists and `literal` fields. */
function ownConfig(step: Step, type: StepType<TSchema>): Record<string, unknown> {
  const config = stepConfig(step);
  for (const k of type.literal ?? []) delete config[k];
  switch (step.type) {
    case 'if':
      delete config.then;
      delete config.else;
      break;
    case 'switch':
      delete config.default;
      if (Array.isArray(config.cases))
        config.cases = config.cases.map((c: Record<string, unknown>) => {
          const { steps: _steps, ...rest } = c;
          return rest;
        });
      break;
    case 'forEach':
      delete config.steps;
      break;
  }
  return config;
}

/** validateSteps, after loading the code sandbox when a `code` step needs its syntax checked. */
export async function validateStepsAsync(steps: readonly Step[]): Promise<FieldError[]> {
  if (!codeSandboxLoaded() && hasCodeStep(steps)) await loadCodeSandbox();
  return validateSteps(steps);
}

function hasCodeStep(steps: readonly unknown[], level = 1): boolean {
  if (level > MAX_NESTING + 1) return false;
  return steps.some((s) => {
    if (typeof s !== 'object' || s === null) return false;
    const step = s as Step;
    if (step.type === 'code') return true;
    return nestedLists(step).some((l) => hasCodeStep(l.steps, level + 1));
  });
}
