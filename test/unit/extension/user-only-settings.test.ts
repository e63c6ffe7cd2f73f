/**
 * package.json and the code agree on which settings a workspace may never set: exactly those are
 * application-scoped (VS Code then keeps no workspace value of them), and Restricted Mode names the
 * rest, so no setting is left that an untrusted repository could decide.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import packageJson from '../../../package.json';
import { USER_ONLY_SETTING_KEYS } from '../../../src/extension/user-only-settings.ts';

const properties: Record<string, { scope?: string; type: string }> = packageJson.contributes.configuration.properties;
const untrusted = packageJson.capabilities.untrustedWorkspaces;

describe('user-only settings in package.json', () => {
  it('declares application scope for exactly the settings the code reads from user values alone', () => {
    const applicationScoped = Object.entries(properties).filter(([, property]) => property.scope === 'application').map(([name]) => name).sort();
    assert.deepEqual(applicationScoped, USER_ONLY_SETTING_KEYS.map((key) => `freeformBridge.${key}`).sort());
  });

  it('supports Restricted Mode, with every other setting restricted until the workspace is trusted', () => {
    assert.equal(untrusted.supported, 'limited');
    assert.ok(untrusted.description.length > 0);
    const others = Object.keys(properties).filter((name) => properties[name]?.scope !== 'application').sort();
    assert.deepEqual([...untrusted.restrictedConfigurations].sort(), others);
  });
});
