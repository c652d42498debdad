import { describe, expect, it } from 'vitest';
import { mapInOrder } from '../../src/speech/map-in-order.js';

describe('mapInOrder', () => {
  it('yields in order, never more than `limit` results ahead of a slow consumer (a long job\'s sentences do not pile up in memory)', async () => {
    let started = 0;
    const items = Array.from({ length: 40 }, (_, index) => index);
    const seen: number[] = [];
    let mostAhead = 0;
    for await (const result of mapInOrder(items, 2, false, async (index) => {
      started += 1;
      await new Promise((resolve) => setTimeout(resolve, index % 3));
      return { index };
    })) {
      seen.push(result.index);
      mostAhead = Math.max(mostAhead, started - seen.length);
      // A consumer slower than the calls: they must wait for it rather than pile up.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(seen).toEqual(items);
    expect(mostAhead).toBeLessThanOrEqual(2);
  });

  it('stops at a failure and starts nothing after it', async () => {
    const started: number[] = [];
    const run = async () => {
      for await (const _ of mapInOrder([0, 1, 2, 3, 4, 5], 2, false, async (index) => {
        started.push(index);
        if (index === 2) throw new Error('two');
        await new Promise((resolve) => setTimeout(resolve, 5));
        return index;
      })) void _;
    };
    await expect(run()).rejects.toThrow('two');
    expect(Math.max(...started)).toBeLessThanOrEqual(3);
  });
});
