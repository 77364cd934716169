/**
 * A workflow version compiled for running: each step's expressions parsed once, its type looked
 * up, its rendered check built, its nested lists (as its type declares them: StepType.lists)
 * compiled the same way; kept per version (versions never change once saved).
 */
import type { TSchema } from 'typebox';
import type { Step, Workflow } from '../model/workflow.js';
import { stepLists, withoutLists } from '../shared/step-lists.js';
import {
  compileTemplate,
  type ExpressionBudget,
  hasUninterruptible,
  type Template,
  usesVariables,
} from './expressions.js';
import type { StepRegistry } from './steps/index.js';
import { StepFailure, type StepType, secretsAllowedIn } from './steps/types.js';
import { stepConfig, type Validators, validators } from './validate.js';

/** A step as compiled. */
export interface Node {
  step: Step;
  type: StepType<TSchema>;
  /** Its own fields (nested lists and `literal` fields aside), expressions compiled. */
  template: Template;
  /** The type's `literal` fields, as written (put back after rendering). */
  literal: [string, unknown][] | undefined;
  /** A step of a type holding no steps: the check of its rendered configuration. */
  check: Validators['rendered'] | undefined;
  /** A step holding steps: its lists as its type declares them, compiled. */
  lists: CompiledList[] | undefined;
  /** A step holding steps: its fields as stored, lists included (what its `run` gets). */
  config: Record<string, unknown>;
}

export interface CompiledList {
  /** JSON pointer inside the step (`/then`, `/cases/1/steps`). */
  field: string;
  nodes: Node[];
}

export interface Compiled {
  nodes: Node[];
  /** Every step pure (CPU only, no effect outside the execution), nested ones included. */
  pure: boolean;
  /** Some expression may spend unbounded time in one call (expressions.ts `uninterruptible`). */
  uninterruptible: boolean;
  /** Every step pure or contained (StepType.contained): no effect outside the execution. */
  contained: boolean;
  /**
   * Some expression names `$vars` or `$secrets`: the executor hands the run its variables
   * (RunContext.variables), so the version never runs before its commit or in a batch, which
   * have none.
   */
  variables: boolean;
  /**
   * Some step names `resumeUrl` (`$execution.resumeUrl` in an expression or a code step's source):
   * only such a run's `$execution` gets the lazy getter (run-state.ts); an object literal with an
   * accessor cost every other run ~1 µs and more garbage (workflow case, on-CPU profile).
   */
  resumeUrl: boolean;
}

// Compiled workflow versions kept; one is a few KB, and a process rarely runs more than a few
// hundred distinct versions between restarts.
const MAX_CACHED_VERSIONS = 500;

export class Compiler {
  readonly #types: StepRegistry;
  readonly #budget: ExpressionBudget;
  readonly #compiled = new Map<string, Compiled>();
  /** The same, by Workflow object (versions never change once saved). */
  readonly #compiledObjects = new WeakMap<Workflow, Compiled>();

  constructor(types: StepRegistry, budget: ExpressionBudget) {
    this.#types = types;
    this.#budget = budget;
  }

  /** The version compiled (from the cache when it was before); throws StepFailure for a step it cannot compile. */
  compile(workflow: Workflow): Compiled {
    // By object first: a version is loaded once and kept, and a webhook request asks twice
    // (runsBeforeCommit, run); the key below costs a string to build and hash each time.
    let compiled = this.#compiledObjects.get(workflow);
    if (compiled) return compiled;
    const key = `${workflow.id}@${workflow.version}`;
    compiled = this.#compiled.get(key);
    if (compiled) {
      this.#compiledObjects.set(workflow, compiled);
      return compiled;
    }
    const acc = { pure: true, uninterruptible: false, contained: true, variables: false };
    const nodes = this.#compileList(workflow.steps, acc);
    if (acc.variables) {
      acc.pure = false;
      acc.contained = false;
    }
    compiled = { nodes, ...acc, resumeUrl: JSON.stringify(workflow.steps).includes('resumeUrl') };
    if (this.#compiled.size >= MAX_CACHED_VERSIONS)
      this.#compiled.delete(this.#compiled.keys().next().value!);
    this.#compiled.set(key, compiled);
    this.#compiledObjects.set(workflow, compiled);
    return compiled;
  }

  #compileList(
    steps: readonly unknown[],
    acc: { pure: boolean; uninterruptible: boolean; contained: boolean; variables: boolean },
  ): Node[] {
    return steps.map((s) => {
      const step = s as Step;
      const type = this.#types.get(step.type);
      if (!type)
        throw new StepFailure(
          `Step "${step.name}" has type "${step.type}", which this hookflow does not know.`,
        );
      if (type.pure !== true) acc.pure = false;
      if (type.pure !== true && type.contained !== true) acc.contained = false;
      const config = withoutLists(stepConfig(step), type.lists);
      let literal: [string, unknown][] | undefined;
      if (type.literal) {
        literal = [];
        for (const k of type.literal)
          if (Object.hasOwn(config, k)) {
            literal.push([k, config[k]]);
            delete config[k];
          }
      }
      const { template, errors } = compileTemplate(config, '', this.#budget, (field) =>
        secretsAllowedIn(type, field),
      );
      if (errors[0])
        throw new StepFailure(`Step "${step.name}": ${errors[0].message}`, { field: errors[0].field });
      if (hasUninterruptible(template)) acc.uninterruptible = true;
      if (usesVariables(template)) acc.variables = true;
      const lists = type.lists
        ? stepLists(step, type.lists).map((l) => ({ field: l.field, nodes: this.#compileList(l.steps, acc) }))
        : undefined;
      const check = lists ? undefined : validators(type).rendered;
      return { step, type, template, literal, check, lists, config: lists ? stepConfig(step) : config };
    });
  }
}

/** The part of a template at a JSON pointer inside it (a literal `undefined` where there is none). */
export function templateAt(template: Template, field: string): Template {
  let at = template;
  for (const key of field.split('/').slice(1)) {
    switch (at.kind) {
      case 'object':
        at = at.entries.find(([k]) => k === key)?.[1] ?? NOTHING;
        break;
      case 'array':
        at = at.items[Number(key)] ?? NOTHING;
        break;
      case 'literal': {
        const value = at.value as Record<string, unknown> | null;
        at =
          typeof value === 'object' && value !== null && Object.hasOwn(value, key)
            ? { kind: 'literal', value: value[key] }
            : NOTHING;
        break;
      }
      default:
        return NOTHING;
    }
  }
  return at;
}

const NOTHING: Template = { kind: 'literal', value: undefined };
