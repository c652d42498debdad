import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import svgpath from 'svgpath';

/**
 * Colour emoji for captions from Twemoji (npm `@discordapp/twemoji`: code MIT, graphics CC-BY 4.0 by Twitter and
 * Discord), one SVG a sequence, turned into vector drawings that libass fills: one layer a shape, each with its own
 * colour and opacity, drawn in the order of the file. The files are flat (paths, circles and ellipses, some in
 * groups that give them a fill), so a small scanner reads them; svgpath makes their paths absolute lines and
 * cubic curves. Clip paths (a few flags) are not applied.
 */
const SVG_DIR = path.join(path.dirname(createRequire(import.meta.url).resolve('@discordapp/twemoji/package.json')), 'dist', 'svg');

/** The side of Twemoji's view box. */
const VIEW_BOX = 36;

/** One shape of an emoji: its fill as RGB hex without `#`, its opacity (0 to 1), and its outline in the view box. */
export interface EmojiLayer {
  colour: string;
  opacity: number;
  segments: ReadonlyArray<readonly [string, ...number[]]>;
}

let names: Set<string> | undefined;

/** The Twemoji name (code points in hex, joined by `-`) of a grapheme cluster, if it has a picture: Twemoji drops U+FE0F from most names. */
export function twemojiName(cluster: string): string | undefined {
  names ??= new Set(readdirSync(SVG_DIR).map((file) => file.replace(/\.svg$/, '')));
  const points = [...cluster].map((character) => (character.codePointAt(0) as number).toString(16));
  const full = points.join('-');
  const bare = points.filter((point) => point !== 'fe0f').join('-');
  return [full, bare].find((name) => names?.has(name));
}

const layers = new Map<string, EmojiLayer[]>();

/** The layers of a Twemoji picture by its name (twemojiName), read once. */
export function twemojiLayers(name: string): EmojiLayer[] {
  let found = layers.get(name);
  if (!found) {
    found = parseSvg(readFileSync(path.join(SVG_DIR, `${name}.svg`), 'utf8'));
    layers.set(name, found);
  }
  return found;
}

const NAMED_COLOURS: Record<string, string> = { black: '000000', white: 'FFFFFF', red: 'FF0000', green: '008000', navy: '000080' };

function colourOf(fill: string): string | undefined {
  if (fill === 'none') return undefined;
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(fill)?.[1];
  if (!hex) return NAMED_COLOURS[fill.toLowerCase()] ?? '000000';
  return (hex.length === 3 ? [...hex].map((digit) => digit + digit).join('') : hex).toUpperCase();
}

/** An ellipse as a path of two arcs (svgpath turns them into curves). */
function ellipsePath(cx: number, cy: number, rx: number, ry: number): string {
  return `M${cx - rx} ${cy}A${rx} ${ry} 0 1 0 ${cx + rx} ${cy}A${rx} ${ry} 0 1 0 ${cx - rx} ${cy}Z`;
}

interface Inherited {
  fill: string;
  opacity: number;
}

function parseSvg(svg: string): EmojiLayer[] {
  const found: EmojiLayer[] = [];
  const groups: Inherited[] = [{ fill: '#000', opacity: 1 }];
  let hidden = 0;
  for (const tag of svg.matchAll(/<(\/?)([a-zA-Z]+)([^>]*?)(\/?)>/g)) {
    const [, closing, name, attributeText = '', selfClosing] = tag;
    const attributes = Object.fromEntries([...attributeText.matchAll(/([\w:-]+)="([^"]*)"/g)].map((match) => [match[1], match[2] as string]));
    const number = (key: string) => Number(attributes[key] ?? 0);
    // Clip paths and definitions are not drawn themselves.
    if (name === 'clipPath' || name === 'defs') {
      if (closing) hidden -= 1;
      else if (!selfClosing) hidden += 1;
      continue;
    }
    if (hidden > 0) continue;
    const parent = groups.at(-1) as Inherited;
    const own: Inherited = {
      fill: attributes.fill ?? parent.fill,
      opacity: parent.opacity * Number(attributes.opacity ?? 1) * Number(attributes['fill-opacity'] ?? 1),
    };
    if (name === 'g') {
      if (closing) groups.pop();
      else if (!selfClosing) groups.push(own);
      continue;
    }
    if (closing) continue;
    const d =
      name === 'path' ? attributes.d
      : name === 'circle' ? ellipsePath(number('cx'), number('cy'), number('r'), number('r'))
      : name === 'ellipse' ? ellipsePath(number('cx'), number('cy'), number('rx'), number('ry'))
      : undefined;
    const colour = colourOf(own.fill);
    if (!d || !colour || own.opacity <= 0) continue;
    const segments: Array<readonly [string, ...number[]]> = [];
    svgpath(d)
      .transform(attributes.transform ?? '')
      .abs()
      .unarc()
      .unshort()
      .iterate((segment, _index, x, y) => {
        const [command, ...values] = segment as [string, ...number[]];
        // Lines and cubic curves only: what ASS drawings have.
        if (command === 'H') segments.push(['L', values[0] as number, y]);
        else if (command === 'V') segments.push(['L', x, values[0] as number]);
        else if (command === 'Q') {
          const [qx, qy, ex, ey] = values as [number, number, number, number];
          segments.push(['C', x + (2 / 3) * (qx - x), y + (2 / 3) * (qy - y), ex + (2 / 3) * (qx - ex), ey + (2 / 3) * (qy - ey), ex, ey]);
        } else if (command === 'M' || command === 'L' || command === 'C') segments.push([command, ...values]);
      });
    found.push({ colour, opacity: Math.min(1, own.opacity), segments });
  }
  return found;
}

/**
 * An ASS drawing of a layer in a square of `size` units whose top left is 0 0, the picture inset by `inset` units
 * on each side; with the square's corners as moves, so every layer of a picture (and a blank of its size) has the
 * same bounding box, which is what libass lays a drawing out by.
 */
export function layerDrawing(layer: EmojiLayer | undefined, size: number, inset: number): string {
  const scale = (size - 2 * inset) / VIEW_BOX;
  const at = (value: number) => String(Math.round(inset + value * scale));
  const commands = [`m 0 0 m ${size} ${size}`];
  let last = 'm';
  for (const [command, ...values] of layer?.segments ?? []) {
    const letter = command === 'M' ? 'm' : command === 'L' ? 'l' : 'b';
    // A letter holds for the points after it, as in SVG; a move always names its own.
    commands.push(`${letter === last && letter !== 'm' ? '' : `${letter} `}${(values as number[]).map(at).join(' ')}`);
    last = letter;
  }
  return commands.join(' ');
}
