import { GRAMMAR_ENFORCEMENT_OFF, type BridgeOptions, type GrammarEnforcement } from '../core/bridge-options.ts';

/*
 * Per backend and model, whether lowered free-form tools carry their grammar as an engine-enforced
 * pattern, for the life of the process. The setting decides first: `off`, a form forced by someone
 * who knows the engine, or `auto`, where only the engine self-test (grammar-self-test.ts) turns it on
 * for a model. An error from the engine that names the schema or the pattern turns it off for good.
 * The lift-time grammar check runs whatever is decided here: an engine can ignore a pattern silently.
 */

export type GrammarEnforcementSetting = 'off' | 'auto' | 'escaped' | 'value';

export const GRAMMAR_ENFORCEMENT_SETTINGS: readonly GrammarEnforcementSetting[] = ['off', 'auto', 'escaped', 'value'];

/** An engine's refusal that is about the schema or pattern we added, not the request in general. */
const PATTERN_REFUSAL = /\b(pattern|regex|regular expression|grammar|json[ _-]?schema|schema|xgrammar|outlines|llguidance|structural[ _]tag|strict)\b/i;

export function isPatternRefusal(message: string): boolean {
  return PATTERN_REFUSAL.test(message);
}

export type SelfTestRunner = (model: string) => Promise<GrammarEnforcement>;

export class GrammarEnforcementRegistry {
  private readonly decided = new Map<string, GrammarEnforcement>();
  private readonly running = new Set<string>();
  /** One options object per base options and decision: the tool-lowering cache keys on identity. */
  private readonly optionsCache = new WeakMap<BridgeOptions, Map<GrammarEnforcement, BridgeOptions>>();

  constructor(
    readonly setting: GrammarEnforcementSetting,
    private readonly runSelfTest: SelfTestRunner | null,
    private readonly onDecided: (model: string, decision: GrammarEnforcement) => void = () => {},
  ) {}

  decisionFor(model: string): GrammarEnforcement {
    const known = this.decided.get(model);
    if (known !== undefined) return known;
    switch (this.setting) {
      case 'off':
        return GRAMMAR_ENFORCEMENT_OFF;
      case 'escaped':
        return this.remember(model, { enforced: true, form: 'escaped-text', strict: true, reason: 'the setting asks for the escaped-text form' });
      case 'value':
        return this.remember(model, { enforced: true, form: 'value', strict: true, reason: 'the setting asks for the value form' });
      case 'auto':
        this.startSelfTest(model);
        return { enforced: false, reason: 'the engine self-test for this model has not finished yet' };
    }
  }

  /** Runs the self-test for a model now (serve's start-up) and resolves once its result is known. */
  async selfTest(model: string): Promise<GrammarEnforcement> {
    if (this.setting !== 'auto' || this.runSelfTest === null) return this.decisionFor(model);
    const known = this.decided.get(model);
    if (known !== undefined) return known;
    this.running.add(model);
    try {
      return this.remember(model, await this.runSelfTest(model));
    } catch (error) {
      return this.remember(model, { enforced: false, reason: `the engine self-test failed: ${error instanceof Error ? error.message : String(error)}` });
    } finally {
      this.running.delete(model);
    }
  }

  /** The engine refused a request carrying the pattern: never send it to this model again. */
  refuse(model: string, message: string): GrammarEnforcement {
    return this.remember(model, { enforced: false, reason: `the engine refused the pattern: ${message.slice(0, 200)}` });
  }

  optionsFor(base: BridgeOptions, model: string): BridgeOptions {
    const decision = this.decisionFor(model);
    let byDecision = this.optionsCache.get(base);
    if (byDecision === undefined) {
      byDecision = new Map();
      this.optionsCache.set(base, byDecision);
    }
    let options = byDecision.get(decision);
    if (options === undefined) {
      options = Object.freeze({ ...base, grammarEnforcement: decision });
      byDecision.set(decision, options);
    }
    return options;
  }

  private startSelfTest(model: string): void {
    if (this.runSelfTest === null || this.running.has(model)) return;
    void this.selfTest(model);
  }

  private remember(model: string, decision: GrammarEnforcement): GrammarEnforcement {
    this.decided.set(model, decision);
    this.onDecided(model, decision);
    return decision;
  }
}
