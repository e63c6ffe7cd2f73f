import type { z } from 'zod';

/*
 * A zod schema, compiled once into a plain checking function that builds no second object tree.
 *
 * zod's `safeParse` copies every object and array it accepts, and on every Codex turn that is the
 * whole request (tens of thousands of values for a long session) and every streamed chunk. The
 * compiled check walks the same value, answers "valid" with the value itself, and copies only where
 * the schema changes something (a preprocess step that wraps an unknown kind, an object that strips
 * unknown keys). When it says "invalid" the caller runs zod itself, so every error message still
 * comes from zod, and zod stays the one description of each shape: the compiler reads the schema's
 * definition and nothing else. A schema kind or check it does not know fails the compilation (never
 * a request), which the unit tests catch for every schema the bridge compiles.
 */

/** Returned by a compiled check for a value the schema does not accept. */
export const CHECK_FAILED: unique symbol = Symbol('check failed');

type Check = (value: unknown) => unknown;

/** The parts of a zod 4 schema definition the compiler reads (zod's own `_zod.def`). */
interface SchemaDefinition {
  type: string;
  checks?: ReadonlyArray<{ _zod: { def: CheckDefinition } }>;
  shape?: Record<string, SchemaLike>;
  catchall?: SchemaLike;
  innerType?: SchemaLike;
  element?: SchemaLike;
  options?: ReadonlyArray<SchemaLike>;
  discriminator?: string;
  keyType?: SchemaLike;
  valueType?: SchemaLike;
  entries?: Record<string, unknown>;
  values?: ReadonlyArray<unknown>;
  in?: SchemaLike;
  out?: SchemaLike;
  transform?: (value: unknown, context: unknown) => unknown;
}

interface CheckDefinition {
  check: string;
  minimum?: number;
  maximum?: number;
  length?: number;
  value?: number;
  inclusive?: boolean;
  format?: string;
}

interface SchemaLike {
  _zod: { def: SchemaDefinition };
}

function definitionOf(schema: SchemaLike): SchemaDefinition {
  return schema._zod.def;
}

function isObjectValue(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value check for one zod refinement (`min(1)`, `int()`, `positive()` …). */
function compileRefinement(definition: CheckDefinition, schemaType: string): (value: never) => boolean {
  const { check } = definition;
  if (check === 'min_length' && definition.minimum !== undefined) {
    const minimum = definition.minimum;
    return (value: { length: number }) => value.length >= minimum;
  }
  if (check === 'max_length' && definition.maximum !== undefined) {
    const maximum = definition.maximum;
    return (value: { length: number }) => value.length <= maximum;
  }
  if (check === 'length_equals' && definition.length !== undefined) {
    const length = definition.length;
    return (value: { length: number }) => value.length === length;
  }
  if (check === 'number_format' && (definition.format === 'safeint' || definition.format === 'int32' || definition.format === 'uint32')) {
    const [low, high] = definition.format === 'safeint' ? [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER] : definition.format === 'int32' ? [-(2 ** 31), 2 ** 31 - 1] : [0, 2 ** 32 - 1];
    return (value: number) => Number.isInteger(value) && value >= low && value <= high;
  }
  if ((check === 'greater_than' || check === 'less_than') && typeof definition.value === 'number') {
    const bound = definition.value;
    const inclusive = definition.inclusive === true;
    if (check === 'greater_than') return inclusive ? (value: number) => value >= bound : (value: number) => value > bound;
    return inclusive ? (value: number) => value <= bound : (value: number) => value < bound;
  }
  throw new Error(`compiled check: the ${schemaType} refinement '${check}' is not supported`);
}

function withRefinements(schema: SchemaDefinition, base: (value: unknown) => boolean): Check {
  const refinements = (schema.checks ?? []).map((entry) => compileRefinement(entry._zod.def, schema.type) as (value: unknown) => boolean);
  if (refinements.length === 0) return (value) => (base(value) ? value : CHECK_FAILED);
  return (value) => {
    if (!base(value)) return CHECK_FAILED;
    for (const refinement of refinements) if (!refinement(value)) return CHECK_FAILED;
    return value;
  };
}

function compileObject(definition: SchemaDefinition, compile: (schema: SchemaLike) => Check): Check {
  const shape = definition.shape ?? {};
  const keys = Object.keys(shape);
  const checks = keys.map((key) => compile(shape[key] as SchemaLike));
  const catchallType = definition.catchall ? definitionOf(definition.catchall).type : null;
  // `looseObject` keeps every other key (catchall unknown); `object` strips them; `strictObject`
  // refuses them (catchall never). Any other catchall would need checking each extra key.
  if (catchallType !== null && catchallType !== 'unknown' && catchallType !== 'any' && catchallType !== 'never') {
    throw new Error(`compiled check: an object catchall of type '${catchallType}' is not supported`);
  }
  const known = new Set(keys);
  const strips = catchallType === null;
  const refusesExtra = catchallType === 'never';
  return (value) => {
    if (!isObjectValue(value)) return CHECK_FAILED;
    let copy: Record<string, unknown> | null = null;
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string;
      const field = value[key];
      const checked = (checks[index] as Check)(field);
      if (checked === CHECK_FAILED) return CHECK_FAILED;
      if (checked !== field) {
        copy ??= { ...value };
        copy[key] = checked;
      }
    }
    if (strips || refusesExtra) {
      for (const key in value) {
        if (known.has(key)) continue;
        if (refusesExtra) return CHECK_FAILED;
        copy ??= { ...value };
        delete copy[key];
      }
    }
    return copy ?? value;
  };
}

function compileArray(definition: SchemaDefinition, compile: (schema: SchemaLike) => Check): Check {
  const element = compile(definition.element as SchemaLike);
  const lengthOk = withRefinements(definition, () => true);
  return (value) => {
    if (!Array.isArray(value) || lengthOk(value) === CHECK_FAILED) return CHECK_FAILED;
    let copy: unknown[] | null = null;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const checked = element(item);
      if (checked === CHECK_FAILED) return CHECK_FAILED;
      if (checked !== item) {
        copy ??= value.slice();
        copy[index] = checked;
      }
    }
    return copy ?? value;
  };
}

/** The literal values an option's discriminator field accepts. */
function discriminatorValues(option: SchemaLike, discriminator: string): unknown[] {
  const field = definitionOf(option).shape?.[discriminator];
  if (!field) throw new Error(`compiled check: a union option has no '${discriminator}' field`);
  const definition = definitionOf(field);
  if (definition.type === 'literal') return [...(definition.values ?? [])];
  if (definition.type === 'enum') return Object.values(definition.entries ?? {});
  throw new Error(`compiled check: the discriminator '${discriminator}' must be a literal or an enum, not '${definition.type}'`);
}

function compileUnion(definition: SchemaDefinition, compile: (schema: SchemaLike) => Check): Check {
  const options = definition.options ?? [];
  const discriminator = definition.discriminator;
  if (discriminator !== undefined) {
    const byValue = new Map<unknown, Check>();
    for (const option of options) {
      const check = compile(option);
      for (const value of discriminatorValues(option, discriminator)) if (!byValue.has(value)) byValue.set(value, check);
    }
    return (value) => {
      if (!isObjectValue(value)) return CHECK_FAILED;
      const check = byValue.get(value[discriminator]);
      return check ? check(value) : CHECK_FAILED;
    };
  }
  const checks = options.map(compile);
  // zod takes the first option that accepts the value.
  return (value) => {
    for (const check of checks) {
      const checked = check(value);
      if (checked !== CHECK_FAILED) return checked;
    }
    return CHECK_FAILED;
  };
}

function compileNode(schema: SchemaLike): Check {
  const definition = definitionOf(schema);
  switch (definition.type) {
    case 'string':
      return withRefinements(definition, (value) => typeof value === 'string');
    case 'number':
      // zod's number refuses NaN and ±Infinity.
      return withRefinements(definition, (value) => typeof value === 'number' && Number.isFinite(value));
    case 'boolean':
      return withRefinements(definition, (value) => typeof value === 'boolean');
    case 'null':
      return (value) => (value === null ? value : CHECK_FAILED);
    case 'unknown':
    case 'any':
      return (value) => value;
    case 'literal': {
      const values = new Set(definition.values ?? []);
      return (value) => (values.has(value) ? value : CHECK_FAILED);
    }
    case 'enum': {
      const values = new Set(Object.values(definition.entries ?? {}));
      return (value) => (values.has(value) ? value : CHECK_FAILED);
    }
    case 'optional': {
      const inner = compileNode(definition.innerType as SchemaLike);
      return (value) => (value === undefined ? value : inner(value));
    }
    case 'nullable': {
      const inner = compileNode(definition.innerType as SchemaLike);
      return (value) => (value === null ? value : inner(value));
    }
    case 'object':
      return compileObject(definition, compileNode);
    case 'array':
      return compileArray(definition, compileNode);
    case 'union':
      return compileUnion(definition, compileNode);
    case 'record': {
      const keyType = definitionOf(definition.keyType as SchemaLike).type;
      if (keyType !== 'string') throw new Error(`compiled check: record keys of type '${keyType}' are not supported`);
      const valueType = definitionOf(definition.valueType as SchemaLike).type;
      if (valueType === 'unknown' || valueType === 'any') return (value) => (isObjectValue(value) ? value : CHECK_FAILED);
      return compileRecordValues(compileNode(definition.valueType as SchemaLike));
    }
    case 'pipe':
      return compilePipe(definition);
    case 'transform': {
      const transform = definition.transform;
      // A transform that reads zod's context (to add issues) cannot run outside zod.
      if (!transform || transform.length > 1) throw new Error('compiled check: only one-argument transforms (preprocess steps) are supported');
      return (value) => transform(value, undefined);
    }
    default:
      throw new Error(`compiled check: the schema type '${definition.type}' is not supported`);
  }
}

function compileRecordValues(valueCheck: Check): Check {
  return (value) => {
    if (!isObjectValue(value)) return CHECK_FAILED;
    let copy: Record<string, unknown> | null = null;
    for (const key in value) {
      const item = value[key];
      const checked = valueCheck(item);
      if (checked === CHECK_FAILED) return CHECK_FAILED;
      if (checked !== item) {
        copy ??= { ...value };
        copy[key] = checked;
      }
    }
    return copy ?? value;
  };
}

function compilePipe(definition: SchemaDefinition): Check {
  const first = compileNode(definition.in as SchemaLike);
  const second = compileNode(definition.out as SchemaLike);
  return (value) => {
    const middle = first(value);
    return middle === CHECK_FAILED ? CHECK_FAILED : second(middle);
  };
}

export type SafeParseResult<Output> = { success: true; data: Output } | { success: false; error: z.ZodError };

/**
 * `schema.safeParse`, answered by the compiled check whenever it accepts the value, and by zod
 * itself otherwise (so a refusal carries zod's own issues). Throws at creation for a schema the
 * compiler does not support.
 */
export function createCheckedParser<Schema extends z.ZodType>(schema: Schema): (value: unknown) => SafeParseResult<z.output<Schema>> {
  const check = compileNode(schema as unknown as SchemaLike);
  return (value) => {
    const checked = check(value);
    if (checked !== CHECK_FAILED) return { success: true, data: checked as z.output<Schema> };
    const result = schema.safeParse(value);
    return result.success ? { success: true, data: result.data } : { success: false, error: result.error };
  };
}
