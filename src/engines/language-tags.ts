/**
 * BCP-47 language tags as people write them and as engines do: `zh`, `zh-CN`, `zh-Hans` and `cmn` all name
 * Mandarin; `zh-HK` and `yue` Cantonese. Macrolanguages (ISO 639-3) are resolved to their member languages both
 * ways, so that a filter finds a voice whichever of the two spellings either side uses.
 */

interface Macrolanguage {
  /** The individual languages under it that voices or people name (ISO 639-3). */
  members: readonly string[];
  /** What the macrolanguage's own tag means when it stands alone (a voice tagged `ar` speaks Standard Arabic). */
  usual?: string;
  /** Members implied by a region or a script subtag (`zh-HK` is Cantonese, as speech services use it). */
  byRegion?: Readonly<Record<string, string>>;
  byScript?: Readonly<Record<string, string>>;
}

const MACROLANGUAGES: Readonly<Record<string, Macrolanguage>> = {
  zh: {
    members: ['cmn', 'yue', 'hak', 'nan', 'wuu', 'hsn', 'gan', 'cdo', 'cjy', 'cpx', 'czh', 'czo', 'mnp', 'lzh'],
    usual: 'cmn',
    byRegion: { cn: 'cmn', sg: 'cmn', tw: 'cmn', hk: 'yue', mo: 'yue' },
    byScript: { hans: 'cmn' },
  },
  ar: { members: ['arb', 'arz', 'apc', 'ajp', 'ary', 'acm', 'aeb', 'afb', 'apd', 'ars', 'ayl', 'acq', 'aao', 'shu'], usual: 'arb' },
  fa: { members: ['pes', 'prs'], usual: 'pes' },
  ms: { members: ['zsm', 'zlm', 'bjn', 'min', 'mfa', 'max', 'meo', 'jax'], usual: 'zsm' },
  no: { members: ['nb', 'nn'], usual: 'nb' },
  sw: { members: ['swh', 'swc'], usual: 'swh' },
  et: { members: ['ekk', 'vro'], usual: 'ekk' },
  lv: { members: ['lvs', 'ltg'], usual: 'lvs' },
  uz: { members: ['uzn', 'uzs'], usual: 'uzn' },
  sq: { members: ['als', 'aln', 'aae', 'aat'], usual: 'als' },
  az: { members: ['azj', 'azb'], usual: 'azj' },
  ku: { members: ['kmr', 'ckb', 'sdh'], usual: 'kmr' },
  mn: { members: ['khk', 'mvf'], usual: 'khk' },
  ps: { members: ['pbu', 'pst', 'pbt'], usual: 'pbu' },
  ne: { members: ['npi', 'dty'], usual: 'npi' },
  or: { members: ['ory', 'spv'], usual: 'ory' },
  kok: { members: ['gom', 'knn'], usual: 'gom' },
  yi: { members: ['ydd', 'yih'], usual: 'ydd' },
  om: { members: ['gaz', 'hae', 'orc'], usual: 'gaz' },
  gn: { members: ['gug', 'gui', 'gun', 'gnw', 'nhd'], usual: 'gug' },
  mg: { members: ['plt', 'xmv', 'bhr', 'msh', 'tdx', 'skg'], usual: 'plt' },
  qu: { members: ['quz', 'quy', 'qub', 'qug', 'qvi', 'qul', 'qup'] },
  hbs: { members: ['hr', 'bs', 'sr', 'cnr'] },
};

const MACRO_OF: ReadonlyMap<string, string> = new Map(
  Object.entries(MACROLANGUAGES).flatMap(([macro, { members }]) => members.map((member) => [member, macro] as const)),
);

/** Deprecated and grandfathered tags (RFC 5646 registry) and what replaced them. */
const REPLACED: Readonly<Record<string, string>> = {
  iw: 'he', in: 'id', ji: 'yi', jw: 'jv', mo: 'ro', sh: 'hbs', 'i-klingon': 'tlh', 'art-lojban': 'jbo',
  'no-bok': 'nb', 'no-nyn': 'nn', 'zh-guoyu': 'cmn', 'zh-hakka': 'hak', 'zh-min-nan': 'nan', 'zh-xiang': 'hsn',
};

/** The script a member of a macrolanguage is written in where the tag does not say. */
function likelyScript(language: string, region: string | undefined): string | undefined {
  if (language === 'cmn') return region === 'tw' || region === 'hk' || region === 'mo' ? 'hant' : 'hans';
  if (language === 'yue') return region === 'cn' ? 'hans' : 'hant';
  return undefined;
}

interface LanguageTag {
  /** The individual language where it is known, else the (macro)language as written; lowercase, like all below. */
  language: string;
  /** The macrolanguage `language` belongs to. */
  macro?: string;
  script?: string;
  region?: string;
  /** Variants, extensions and private use, in order. */
  variants: string[];
}

/**
 * A tag's parts, lowercase, its language resolved to a member of its macrolanguage where the tag implies one
 * (`zh-yue`, `zh-HK`, `zh-Hans`) and, with `usual`, where the macrolanguage stands alone (a voice tagged `zh`).
 */
function parseTag(tag: string, usual: boolean): LanguageTag {
  let subtags = tag.trim().toLowerCase().split(/[-_]/u);
  for (let length = Math.min(3, subtags.length); length > 0; length -= 1) {
    const replaced = REPLACED[subtags.slice(0, length).join('-')];
    if (replaced !== undefined) {
      subtags = [replaced, ...subtags.slice(length)];
      break;
    }
  }
  let [language = '', ...rest] = subtags;
  // An extended language subtag (`zh-yue`, `ar-arz`) names the language itself.
  if (/^[a-z]{3}$/u.test(rest[0] ?? '') && MACRO_OF.get(rest[0] as string) === language) [language = '', ...rest] = rest;
  const script = /^[a-z]{4}$/u.test(rest[0] ?? '') ? rest.shift() : undefined;
  const region = /^([a-z]{2}|\d{3})$/u.test(rest[0] ?? '') ? rest.shift() : undefined;
  const macro = MACROLANGUAGES[language];
  if (macro) {
    const member = (script && macro.byScript?.[script]) || (region && macro.byRegion?.[region]) || (usual ? macro.usual : undefined);
    if (member) return { language: member, macro: language, script, region, variants: rest };
  }
  return { language, macro: MACRO_OF.get(language), script, region, variants: rest };
}

/**
 * Whether a voice tagged `tag` answers a search for `query` (both case-insensitive): the query's language is the
 * voice's, or its macrolanguage (`zh` finds `cmn` and `yue`), or the member a macrolanguage tag implies (`cmn` finds
 * `zh-CN`, `zh-CN` finds `cmn` but not `yue`); then each subtag the query has, the voice has too (`en` finds
 * `en-US`, `en-GB` only `en-GB…`), a missing script read as the language's usual one (`zh-Hans` finds `cmn`).
 */
export function matchesLanguage(query: string, tag: string): boolean {
  const wanted = parseTag(query, false);
  const voice = parseTag(tag, true);
  if (wanted.language !== voice.language && wanted.language !== voice.macro && wanted.macro !== voice.language) return false;
  if (wanted.script) {
    const script = voice.script ?? likelyScript(voice.language, voice.region);
    if (script !== undefined && script !== wanted.script) return false;
  }
  if (wanted.region && wanted.region !== voice.region) return false;
  return wanted.variants.every((variant, index) => voice.variants[index] === variant);
}

function formatTag(language: string, script: string | undefined, region: string | undefined, variants: readonly string[]): string {
  return [
    language,
    ...(script ? [script.charAt(0).toUpperCase() + script.slice(1)] : []),
    ...(region ? [region.toUpperCase()] : []),
    ...variants,
  ].join('-');
}

/**
 * The tag a person would use for what an engine calls `tag`: a macrolanguage's usual member by the macrolanguage's
 * code (`arb` → `ar`, but `nb` stays), and Chinese as `zh` with the region that says which (`cmn` → `zh-CN`, `yue` → `zh-HK`), as
 * browsers and phones tag Mandarin and Cantonese. Other tags keep their language; subtags get their usual case.
 */
export function preferredTag(tag: string): string {
  const { language, macro, script, region, variants } = parseTag(tag, true);
  const table = macro === undefined ? undefined : MACROLANGUAGES[macro];
  if (macro === undefined || table === undefined) return formatTag(language, script, region, variants);
  const home = Object.entries(table.byRegion ?? {}).find(([, member]) => member === language)?.[0];
  if (home !== undefined) return formatTag(macro, script, region ?? home, variants);
  // A member with a two-letter code of its own (`nb`) keeps it.
  return formatTag(table.usual === language && language.length === 3 ? macro : language, script, region, variants);
}

/** The tag with its individual language (`zh-HK` → `yue-HK`, `ar` → `arb`), for tables kept by spoken language. */
export function individualTag(tag: string): string {
  const { language, script, region, variants } = parseTag(tag, true);
  return formatTag(language, script, region, variants);
}
