import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { diffKeyedList, type KeyedListPatch } from '../../../media/traffic-panel-list-diff.ts';

interface Row {
  id: string;
  text: string;
}

const row = (id: string, text = id): Row => ({ id, text });
const keyOf = (item: Row): string => item.id;
const sameText = (before: Row, after: Row): boolean => before.text === after.text;

function shownFrom(rows: readonly Row[]): { order: string[]; items: Map<string, Row> } {
  return { order: rows.map(keyOf), items: new Map(rows.map((item) => [item.id, item])) };
}

/** Applies a patch the way the DOM writer does (remove, then insert before), to an array of keys. */
function applyPatch(order: readonly string[], patch: KeyedListPatch): string[] {
  const removed = new Set(patch.removed);
  const list = order.filter((key) => !removed.has(key));
  for (const { key, before } of patch.placements) {
    const from = list.indexOf(key);
    if (from !== -1) list.splice(from, 1);
    const to = before === null ? list.length : list.indexOf(before);
    assert.notEqual(to, -1, `placement before ${String(before)}, which is not in the list`);
    list.splice(to, 0, key);
  }
  return list;
}

function diff(previous: readonly Row[], next: readonly Row[]): KeyedListPatch {
  const patch = diffKeyedList(shownFrom(previous), next, keyOf, sameText);
  assert.deepEqual(applyPatch(previous.map(keyOf), patch), next.map(keyOf), 'the patch gives the new order');
  return patch;
}

describe('diffKeyedList', () => {
  it('draws every row of a first render, in order, each placed at the end', () => {
    assert.deepEqual(diff([], [row('a'), row('b'), row('c')]), {
      removed: [],
      added: ['a', 'b', 'c'],
      updated: [],
      placements: [
        { key: 'a', before: null },
        { key: 'b', before: null },
        { key: 'c', before: null },
      ],
    });
  });

  it('does nothing when nothing changed', () => {
    const rows = [row('a'), row('b'), row('c')];
    assert.deepEqual(diff(rows, rows.map((item) => ({ ...item }))), { removed: [], added: [], updated: [], placements: [] });
  });

  it('rewrites only the row that changed, in place', () => {
    assert.deepEqual(diff([row('a'), row('b'), row('c')], [row('a'), row('b', 'b ended'), row('c')]), { removed: [], added: [], updated: ['b'], placements: [] });
  });

  it('a new round trip, newest first: one row added at the top, no other row touched', () => {
    const rows = Array.from({ length: 5000 }, (_, index) => row(`resp_${5000 - index}`));
    const patch = diff(rows, [row('resp_5001'), ...rows]);
    assert.deepEqual(patch, { removed: [], added: ['resp_5001'], updated: [], placements: [{ key: 'resp_5001', before: 'resp_5000' }] });
  });

  it('a new round trip, newest last: one row appended', () => {
    assert.deepEqual(diff([row('a'), row('b')], [row('a'), row('b'), row('c')]), { removed: [], added: ['c'], updated: [], placements: [{ key: 'c', before: null }] });
  });

  it('removes the rows that left (ring buffer, filter) and keeps the rest where they are', () => {
    assert.deepEqual(diff([row('a'), row('b'), row('c'), row('d')], [row('b'), row('d')]), { removed: ['a', 'c'], added: [], updated: [], placements: [] });
    assert.deepEqual(diff([row('a'), row('b')], []), { removed: ['a', 'b'], added: [], updated: [], placements: [] });
  });

  it('moves rows only when the order changed: a reversed list, a row moved to the front', () => {
    const reversed = diff([row('a'), row('b'), row('c'), row('d')], [row('d'), row('c'), row('b'), row('a')]);
    assert.deepEqual(reversed.added, []);
    assert.deepEqual(reversed.updated, []);
    assert.deepEqual(reversed.removed, []);
    assert.equal(reversed.placements.length, 3);
    assert.deepEqual(diff([row('a'), row('b'), row('c')], [row('c'), row('a'), row('b')]).placements, [{ key: 'c', before: 'a' }]);
  });

  it('adds, updates, removes and moves in one patch', () => {
    const patch = diff([row('a'), row('b'), row('c'), row('d')], [row('e'), row('c', 'c changed'), row('a'), row('d')]);
    assert.deepEqual(patch.removed, ['b']);
    assert.deepEqual(patch.added, ['e']);
    assert.deepEqual(patch.updated, ['c']);
  });

  it('refuses a list with a repeated key rather than drawing one row twice', () => {
    assert.throws(() => diffKeyedList(shownFrom([]), [row('a'), row('a')], keyOf, sameText), /distinct keys/);
  });
});
