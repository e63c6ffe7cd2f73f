import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createWarningLedger, createWarning } from '../../../src/core/warnings.ts';
import { toWireName, MAX_WIRE_NAME_LENGTH } from '../../../src/core/tool-map.ts';

describe('warning ledger', () => {
  it('emits once per key until the fingerprint changes', () => {
    const ledger = createWarningLedger();
    assert.equal(ledger.shouldEmit('grammar:apply_patch', 'g1'), true);
    assert.equal(ledger.shouldEmit('grammar:apply_patch', 'g1'), false);
    assert.equal(ledger.shouldEmit('grammar:exec', 'g1'), true);
    assert.equal(ledger.shouldEmit('grammar:apply_patch', 'g2'), true);
  });
  it('builds warnings as data with null tool and call id by default', () => {
    assert.deepEqual(createWarning('not_json', 'x'), { kind: 'not_json', tool: null, callId: null, detail: 'x' });
  });
});

describe('wire names', () => {
  it('joins namespace and name with a double underscore', () => {
    assert.equal(toWireName('functions', 'exec'), 'functions__exec');
    assert.equal(toWireName(null, 'exec_command'), 'exec_command');
  });
  it('shortens long names deterministically within the limit', () => {
    const long = toWireName('a'.repeat(40), 'b'.repeat(40));
    assert.equal(long.length, MAX_WIRE_NAME_LENGTH);
    assert.equal(long, toWireName('a'.repeat(40), 'b'.repeat(40)));
    assert.notEqual(long, toWireName('a'.repeat(40), 'c'.repeat(40)));
  });
});
