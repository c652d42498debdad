import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { AppError } from '../errors.js';
import { content, writeAtomically } from '../storage/atomic-write.js';
import { ownerFolder } from '../storage/owner-folder.js';
import { readRecord } from '../storage/records.js';
import { parseLexicon, type Lexicon } from './lexicon.js';

/** 128 random bits, base64url, as asset ids. */
const ID = /^[A-Za-z0-9_-]{22}$/;
/** Beside the owner's assets, in the owner's folder of ASSETS_DIR (a name no asset id can have). */
const SUBFOLDER = 'lexicons';
/** Shared with the asset store, whose sweep removes what a crash left there. */
const TEMP_DIR = '.tmp';
/** Lexicons one client may keep (docs/api.md, Pronunciation lexicons). */
export const MAX_LEXICONS_PER_CLIENT = 100;

const Pronunciation = Type.Object({ kind: Type.Union([Type.Literal('alias'), Type.Literal('ipa')]), text: Type.String(), prefer: Type.Boolean() });

/** What is kept of a lexicon (`<id>.json`, beside the document as sent, `<id>.pls`): its facts and the lexicon read. */
const LexiconRecord = Type.Object({
  id: Type.String({ pattern: ID.source }),
  bytes: Type.Integer({ minimum: 1 }),
  created: Type.String(),
  lexicon: Type.Object({
    language: Type.String(),
    alphabet: Type.Literal('ipa'),
    lexemes: Type.Array(Type.Object({ graphemes: Type.Array(Type.String()), pronunciations: Type.Array(Pronunciation) })),
  }),
});
type LexiconRecord = Static<typeof LexiconRecord>;

/** A stored lexicon as the API tells of it. */
export interface StoredLexicon {
  id: string;
  language: string;
  alphabet: 'ipa';
  lexemes: number;
  bytes: number;
  created: string;
}

/**
 * Uploaded pronunciation lexicons, in each owner's folder of ASSETS_DIR (which workers share): a lexicon belongs
 * to the client that uploaded it, and to everyone else it does not exist. The document is checked before anything
 * is written, then stored with its record last, each written whole (a temporary file renamed): a lexicon exists
 * when its record does. Kept until deleted; ids are never reused, so what an id names never changes.
 */
export class LexiconStore {
  constructor(private readonly dir: string) {}

  async init(): Promise<void> {
    await mkdir(path.join(this.dir, TEMP_DIR), { recursive: true, mode: 0o700 });
  }

  /** Checks `xml` (INVALID_LEXICON) and stores it as `owner`'s; LEXICON_QUOTA_EXCEEDED when the owner keeps the most already. */
  async create(xml: string, owner: string): Promise<StoredLexicon> {
    const lexicon = parseLexicon(xml);
    const folder = this.folderOf(owner);
    const kept = await this.idsIn(folder);
    if (kept.length >= MAX_LEXICONS_PER_CLIENT) {
      throw new AppError('LEXICON_QUOTA_EXCEEDED', {
        message: `You keep ${kept.length} lexicons, the most one client may (${MAX_LEXICONS_PER_CLIENT}); delete one (DELETE /lexicons/{id}) first.`,
      });
    }
    const record: LexiconRecord = { id: randomBytes(16).toString('base64url'), bytes: Buffer.byteLength(xml, 'utf8'), created: new Date().toISOString(), lexicon };
    const tempDir = path.join(this.dir, TEMP_DIR);
    const options = { mode: 0o600 };
    try {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      await writeAtomically(this.documentOf(folder, record.id), tempDir, content(xml), options);
      await writeAtomically(this.recordOf(folder, record.id), tempDir, content(JSON.stringify(record)), options);
    } catch (cause) {
      await this.remove(folder, record.id);
      throw new AppError('STORAGE_FAILED', { cause });
    }
    return described(record);
  }

  /** `owner`'s lexicon with this id, or undefined when the id is malformed, unknown or another's. */
  async get(id: string, owner: string): Promise<StoredLexicon | undefined> {
    const record = await this.readRecord(this.folderOf(owner), id);
    return record && described(record);
  }

  /** The document of `owner`'s lexicon as it was uploaded, or undefined. */
  async document(id: string, owner: string): Promise<string | undefined> {
    const folder = this.folderOf(owner);
    if (!(await this.readRecord(folder, id))) return undefined;
    return readFile(this.documentOf(folder, id), 'utf8').catch(() => undefined);
  }

  /** `owner`'s lexicons, oldest first. */
  async list(owner: string): Promise<StoredLexicon[]> {
    const folder = this.folderOf(owner);
    const records = await Promise.all((await this.idsIn(folder)).map((id) => this.readRecord(folder, id)));
    return records
      .filter((record) => record !== undefined)
      .sort((a, b) => a.created.localeCompare(b.created) || a.id.localeCompare(b.id))
      .map(described);
  }

  /** Deletes one of `owner`'s lexicons; true when there was one. */
  async delete(id: string, owner: string): Promise<boolean> {
    const folder = this.folderOf(owner);
    const found = (await this.readRecord(folder, id)) !== undefined;
    if (found) await this.remove(folder, id);
    return found;
  }

  /**
   * The lexicons a request names, in its order, read for the synthesizer; an id that is not one of `owner`'s
   * lexicons is UNKNOWN_LEXICON (422) naming its place (`lexicons.1`), as an unknown asset is.
   */
  async resolve(ids: readonly string[] | undefined, owner: string, field = 'lexicons'): Promise<Lexicon[]> {
    if (!ids?.length) return [];
    const folder = this.folderOf(owner);
    return Promise.all(
      ids.map(async (id, index) => {
        const record = await this.readRecord(folder, id);
        if (record) return record.lexicon;
        const place = `${field}.${index}`;
        throw new AppError('UNKNOWN_LEXICON', { field: place, message: `${place} is not the id of one of your lexicons: it may have been deleted (POST /lexicons uploads one).` });
      }),
    );
  }

  private folderOf(owner: string): string {
    return path.join(this.dir, ownerFolder(owner), SUBFOLDER);
  }

  /** The ids with a record in `folder`. */
  private async idsIn(folder: string): Promise<string[]> {
    const names = await readdir(folder).catch(() => [] as string[]);
    return names.filter((name) => name.endsWith('.json')).map((name) => name.slice(0, -'.json'.length)).filter((id) => ID.test(id));
  }

  private async readRecord(folder: string, id: string): Promise<LexiconRecord | undefined> {
    if (!ID.test(id)) return undefined;
    return readRecord(this.recordOf(folder, id), LexiconRecord, id);
  }

  private async remove(folder: string, id: string): Promise<void> {
    // The record first: without it the lexicon is gone, whatever happens to its document.
    await rm(this.recordOf(folder, id), { force: true });
    await rm(this.documentOf(folder, id), { force: true });
  }

  private recordOf(folder: string, id: string): string {
    return path.join(folder, `${id}.json`);
  }

  private documentOf(folder: string, id: string): string {
    return path.join(folder, `${id}.pls`);
  }
}

function described(record: LexiconRecord): StoredLexicon {
  const { id, bytes, created, lexicon } = record;
  return { id, language: lexicon.language, alphabet: lexicon.alphabet, lexemes: lexicon.lexemes.length, bytes, created };
}
