/** Seeded generators of hostile JSON bodies for the fuzz tests. */

export type Random = () => number;

/** mulberry32: small, fast, and the same sequence for the same seed. */
export function seeded(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T;
}

const STRINGS = [
  '',
  ' ',
  '\n\t ',
  'Hello.',
  'Short and valid text.',
  '1.5',
  '2',
  'null',
  'true',
  '{"nested": "json"}',
  '\u0000\u0001\u0007\u001b[31m',
  '\ud800',
  'lone \udfff surrogate',
  '😀 emoji 👩‍👩‍👧',
  '<speak><break time="9s"/></speak>',
  '{\\b1}\\N%{pts}',
  "'; rm -rf / #",
  '../../etc/passwd',
  'é'.repeat(50),
];

function randomString(random: Random): string {
  const roll = random();
  if (roll < 0.6) return pick(random, STRINGS);
  if (roll < 0.75) return 'a'.repeat(pick(random, [4999, 5000, 5001, 6000, 20_000]));
  const length = Math.floor(random() * 40);
  return Array.from({ length }, () => String.fromCharCode(Math.floor(random() * 0xffff))).join('');
}

export function randomValue(random: Random, depth = 0): unknown {
  const roll = random();
  if (roll < 0.08) return null;
  if (roll < 0.14) return random() < 0.5;
  if (roll < 0.3) return pick(random, [0, -1, 0.5, 0.49, 1, 2, 2.01, 1e308, -1e308, 3.14159, 1e-9, 2 ** 53]);
  if (roll < 0.75 || depth >= 3) return randomString(random);
  if (roll < 0.87) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  return randomObject(random, depth + 1, ['a', 'text', '__proto__', 'constructor']);
}

function randomObject(random: Random, depth: number, keys: readonly string[]): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const key of keys) if (random() < 0.5) object[key] = randomValue(random, depth);
  return object;
}

/** A body aimed at one operation: its real fields with valid or hostile values, plus now and then an extra field or a non-object. */
export function randomBody(random: Random, fields: Record<string, readonly unknown[]>): string {
  const roll = random();
  if (roll < 0.05) return JSON.stringify(randomValue(random));
  if (roll < 0.08) return pick(random, ['', '{', '{"text": "a",}', '[]', 'nul', '{"text": "\\ud800"']);
  const body: Record<string, unknown> = {};
  for (const [field, good] of Object.entries(fields)) {
    const choice = random();
    if (choice < 0.15) continue;
    body[field] = choice < 0.65 ? pick(random, good) : randomValue(random);
  }
  if (random() < 0.15) body[pick(random, ['extra', 'pitch', '__proto__', 'constructor', ''])] = randomValue(random);
  const json = JSON.stringify(body);
  // __proto__ set by assignment does not serialize; write it literally now and then.
  return random() < 0.05 ? json.replace(/^\{/, '{"__proto__":{"polluted":true},') : json;
}
