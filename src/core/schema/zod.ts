import { config, pipe, transform, type ZodMiniType } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

/*
 * zod, as every schema of the bridge uses it: zod 4's functional API (`zod/mini`), with the English
 * messages the default API would have set. The default API (`import { z } from 'zod'`) attaches
 * dozens of methods to every schema it builds and brings every locale of zod with it; measured in a
 * bundle of zod alone (Node 20), it costs 2.4 MB of heap and 10.6 MB of RSS at start, against 0.15
 * and 0.4 MB for this one. Both build the same schema definitions and give the same issues and
 * messages. A schema is the one description of its shape: values are checked with `safeParse`.
 */
config(en());

// Imported as a namespace (`import * as z from …/schema/zod.ts`), so the bundler keeps only what is used.
export * from 'zod/mini';

/** The default API's `preprocess`, which the functional API leaves out: `normalise` runs first, `schema` checks what it returns. */
export function preprocess<Schema extends ZodMiniType>(normalise: (value: unknown) => unknown, schema: Schema) {
  return pipe(transform(normalise), schema);
}
