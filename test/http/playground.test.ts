import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '../../src/api/errors.js';
import { useTestApp, type TestApp } from '../helpers/helpers.js';
import { runFfmpeg } from '../helpers/media.js';
import { useTempDir } from '../helpers/temp-dir.js';

/** Debian's `chromium` package; CI installs it, so there the test never skips. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const available = existsSync(CHROMIUM) || Boolean(process.env.CI);
const SCREENSHOTS = path.resolve('test-results/playground');
const KEY = 'playground-test-key';
/** Chromium logs every failed fetch; the tests that provoke an API error expect these. */
const FAILED_FETCH = /^console: Failed to load resource: the server responded with a status of (400|401)\b/;

/** A loopback port free now: the app is built knowing it, so that its file URLs (CDN_URL) point at itself. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The app listening on a loopback port, its files (CDN_URL) at its own origin, as a user's service would be. */
function useServedApp(env: Record<string, string> = {}): { t: TestApp; origin: () => string } {
  const settings = { ...env };
  let port = 0;
  // Hooks run in the order they are declared: the port first, then the app built with it, then listening.
  beforeAll(async () => {
    port = await freePort();
    settings.CDN_URL = `http://127.0.0.1:${port}/files`;
  });
  const t = useTestApp(settings);
  beforeAll(async () => {
    await t.app.listen({ host: '127.0.0.1', port });
  });
  return { t, origin: () => `http://127.0.0.1:${port}` };
}

/** The little of the DOM the page functions use (the project compiles without the DOM library). */
interface Dom {
  document: { querySelector(selector: string): (Record<string, unknown> & { dataset: Record<string, string | undefined> }) | null };
}

/** Evaluates an expression in the page (as a string, for the same reason). */
function inPage<T>(page: Page, expression: string): Promise<T> {
  return page.evaluate<T>(expression);
}

/**
 * Waits until a property of an element passes `minimum`, or a text property starts with `minimum`. A function, not a
 * string: the page's Content-Security-Policy forbids the eval a string predicate needs.
 */
function waitUntil(page: Page, selector: string, property: string, minimum: number | string, timeout = 20_000): Promise<unknown> {
  return page.waitForFunction(
    ([selector, property, minimum]) => {
      const value = (globalThis as unknown as Dom).document.querySelector(selector)?.[property];
      return typeof minimum === 'string' ? String(value ?? '').startsWith(minimum) : Number(value) > minimum;
    },
    [selector, property, minimum] as const,
    { timeout },
  );
}

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

describe('the playground page over HTTP', () => {
  const t = useTestApp({ API_KEYS: KEY });

  it('serves the page at / and its files under /playground/, to anyone, with their types and revalidation', async () => {
    for (const [url, type] of [
      ['/', /^text\/html; charset=utf-8$/],
      ['/playground/playground.css', /^text\/css; charset=utf-8$/],
      ['/playground/playground.js', /^(text|application)\/javascript; charset=utf-8$/],
      ['/playground/api.js', /^(text|application)\/javascript; charset=utf-8$/],
      ['/playground/voices.js', /^(text|application)\/javascript; charset=utf-8$/],
    ] as const) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['content-type'], url).toMatch(type);
      expect(response.headers['cache-control'], url).toBe('no-cache');
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['content-security-policy']).toMatch(/default-src 'self'/);
      expect(response.headers.etag, url).toBeTruthy();
      const again = await t.app.inject({ method: 'GET', url, headers: { 'if-none-match': String(response.headers.etag) } });
      expect(again.statusCode, url).toBe(304);
    }
    const page = await t.app.inject({ method: 'GET', url: '/' });
    expect(page.body).toContain('<script type="module" src="/playground/playground.js">');
    expect(page.body).not.toMatch(/https?:\/\/(?!localhost)/);
    expect((await t.app.inject({ method: 'HEAD', url: '/' })).statusCode).toBe(200);
  });

  it('sends nosniff everywhere, and a sandbox with nothing allowed for generated files', async () => {
    const file = await t.app.inject({ method: 'POST', url: '/tts', payload: { text: 'Hi.', voice: 'espeak-ng:en-us' }, headers: { authorization: `Bearer ${KEY}` } });
    const served = await t.fetchFile(file.json<{ url: string }>().url);
    expect(served.statusCode).toBe(200);
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    for (const url of ['/docs/json', '/voices', '/healthz']) {
      expect((await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${KEY}` } })).headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  it('leaves the API as it was: keys still needed, unknown paths 404, docs and files where they were', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/voices' })).statusCode).toBe(401);
    const voices = await t.app.inject({ method: 'GET', url: '/voices', headers: { authorization: `Bearer ${KEY}` } });
    expect(voices.statusCode).toBe(200);
    expect(voices.headers['content-type']).toMatch(/^application\/json/);
    for (const url of ['/playground/missing.js', '/playground/', '/playground/index.html', '/index.html', '/playground/../package.json']) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.json<ErrorBody>().error.code, url).toBe('NOT_FOUND');
    }
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
    const openApi = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(openApi.paths)).toContain('/voices/{id}/preview');
    expect(Object.keys(openApi.paths).filter((route) => route === '/' || route.startsWith('/playground'))).toEqual([]);
    expect((await t.app.inject({ method: 'GET', url: '/files/audio/none.mp3' })).statusCode).toBe(404);
    // `/` is the playground's page: another method there is 405, with what it takes.
    const post = await t.app.inject({ method: 'POST', url: '/', payload: {} });
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toMatch(/GET/);
  });
});

describe.skipIf(!available)('the playground in a real browser', () => {
  const { t, origin } = useServedApp();
  const keyed = useServedApp({ API_KEYS: KEY });
  const media = useTempDir('voxreel-playground-');
  let browser: Browser;

  beforeAll(async () => {
    // Playwright adds --headless, --no-sandbox, --no-first-run and the like itself.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--disable-gpu', '--disable-quic', '--autoplay-policy=no-user-gesture-required'],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  interface PageOptions {
    viewport?: { width: number; height: number };
    /** Console errors the steps provoke on purpose. */
    allowed?: RegExp;
    /** What shows the page is ready for the steps; by default the list of voices. */
    ready?: string;
  }

  /**
   * Runs `steps` on a fresh page at the playground (a profile of its own: no stored key) once it is ready, saves a screenshot of
   * where they end as `<name>.png`, and checks that the page logged no console error and threw nothing.
   */
  async function onPage(name: string, at: string, steps: (page: Page) => Promise<void>, options: PageOptions = {}): Promise<void> {
    const context = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 900 } });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    try {
      await page.goto(`${at}/`);
      await page.waitForSelector(options.ready ?? '#voice-list li');
      await steps(page);
      await screenshot(page, name);
    } finally {
      await context.close();
    }
    expect(problems.filter((problem) => !options.allowed?.test(problem))).toEqual([]);
  }

  async function chooseVoice(page: Page, id: string): Promise<void> {
    await page.fill('#voice-search', id);
    await page.check(`input[name="voice"][value="${id}"]`);
    expect(await page.textContent('#voice-selected')).toContain(id);
  }

  it('loads without errors, finds a voice, previews it, and speaks the text with each word highlighted', async () => {
    await onPage('speech', origin(), async (page) => {
      expect(await page.textContent('#voice-status')).toMatch(/voices/);
      await chooseVoice(page, 'espeak-ng:en-us');
      expect(await page.locator('#voice-list li').count()).toBeLessThan(10);

      await inPage(page, `document.querySelector('#preview-audio').muted = true`);
      await page.click('button[data-voice="espeak-ng:en-us"]');
      await waitUntil(page, '#preview-audio', 'currentTime', 0.2);

      await page.fill('#text', 'One two three four five six seven eight.');
      await inPage(page, `document.querySelector('#speech-audio').muted = true`);
      await page.click('#synthesize');
      await page.waitForFunction(
        () => {
          const { document } = globalThis as unknown as Dom;
          return Number(document.querySelector('#speech-audio')?.currentTime) > 0.3 && Number(document.querySelector('#reader .word.current')?.dataset.index) >= 1;
        },
        undefined,
        { timeout: 20_000 },
      );
      expect(await page.locator('#reader .word').count()).toBe(8);
      expect(await page.textContent('#speech-facts')).toMatch(/Duration\s*\d+\.\d\d s.*Cost\s*[\d.]+ USD/s);
      const curl = (await page.textContent('#speech-curl')) ?? '';
      expect(curl).toContain(`curl -s '${origin()}/tts'`);
      expect(curl).toContain('"voice":"espeak-ng:en-us"');
      expect(curl).toContain('"timestamps":true');
    });
  });

  it('makes a 720p video with an uploaded background and music, and plays it', async () => {
    const image = path.join(media, 'background.png');
    const music = path.join(media, 'music.mp3');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=320x180', '-frames:v', '1', image]);
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'sine=frequency=330:duration=4', '-c:a', 'libmp3lame', music]);
    await onPage('video', origin(), async (page) => {
      await chooseVoice(page, 'espeak-ng:en-us');
      await page.fill('#text', 'A short video from the playground.');
      await page.selectOption('#resolution', '720p');
      await page.check('#background-image');
      await page.setInputFiles('#image-file', image);
      await waitUntil(page, '#image-status', 'textContent', 'Uploaded');
      await page.setInputFiles('#music-file', music);
      await waitUntil(page, '#music-status', 'textContent', 'Uploaded');
      await inPage(page, `document.querySelector('#video').muted = true`);
      await page.click('#make-video');
      await waitUntil(page, '#video', 'currentTime', 0.3, 60_000);
      expect(await inPage(page, `[document.querySelector('#video').videoWidth, document.querySelector('#video').videoHeight]`)).toEqual([1280, 720]);
      expect(await page.textContent('#video-facts')).toContain('1280×720');
      const curl = (await page.textContent('#video-curl')) ?? '';
      expect(curl).toContain("-F 'file=@background.png'");
      expect(curl).toMatch(/"background":\{"image":"[\w-]{22}"\}/);
      expect(curl).toMatch(/"music":\{"id":"[\w-]{22}","volume":-12\}/);
      expect(curl).toContain('"resolution":"720p"');
    });
  });

  it('offers the creator options: a platform sets the frame, pop captions in capitals with a chosen outline, a highlight box, a progress bar, scenes', async () => {
    const scenes = ['red', 'blue'].map((colour) => path.join(media, `scene-${colour}.png`));
    await Promise.all(scenes.map((file, index) => runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', `color=c=${['red', 'blue'][index]}:s=320x180`, '-frames:v', '1', file])));
    const clip = path.join(media, 'clip.mp4');
    await runFfmpeg(['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=s=320x180:d=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', clip]);
    await onPage('creator', origin(), async (page) => {
      await chooseVoice(page, 'espeak-ng:en-us');
      await page.fill('#text', 'Made for phones. Watch it twice.');
      await page.selectOption('#platform', 'tiktok');
      expect(await inPage(page, `document.querySelector('#aspect-ratio').value`)).toBe('9:16');
      await page.selectOption('#resolution', '720p');
      await page.selectOption('#caption-style', 'pop');
      await page.selectOption('#caption-case', 'upper');
      await page.fill('#title', 'Three facts');
      await page.fill('#caption-outline', '0.15');
      await page.dispatchEvent('#caption-outline', 'input');
      await page.check('#highlight-box');
      await page.check('#progress-bar');
      await page.check('#background-video');
      await page.setInputFiles('#clip-file', clip);
      await waitUntil(page, '#clip-status', 'textContent', 'Uploaded');
      await page.setInputFiles('#scene-files', scenes);
      await waitUntil(page, '#scene-status', 'textContent', 'Uploaded');
      await page.selectOption('#transition', 'crossfade');
      await inPage(page, `document.querySelector('#video').muted = true`);
      await page.click('#make-video');
      await waitUntil(page, '#video', 'currentTime', 0.3, 60_000);
      expect(await inPage(page, `[document.querySelector('#video').videoWidth, document.querySelector('#video').videoHeight]`)).toEqual([720, 1280]);
      const curl = (await page.textContent('#video-curl')) ?? '';
      for (const field of ['"platform":"tiktok"', '"caption_style":"pop"', '"caption_case":"upper"', '"caption_outline":0.15', '"title":"Three facts"', '"highlight_box":true', '"progress_bar":true', '"transition":"crossfade"']) {
        expect(curl).toContain(field);
      }
      // One image from each sentence on, each uploaded first.
      expect(curl).toMatch(/"scenes":\[\{"background":\{"image":"[\w-]{22}"\},"sentence":0\},\{"background":\{"image":"[\w-]{22}"\},"sentence":1\}\]/);
      expect(curl).toContain("-F 'file=@scene-blue.png'");
      expect(curl).toMatch(/"background":\{"video":"[\w-]{22}"\}/);
      expect(curl).toContain("-F 'file=@clip.mp4'");
    });
  });

  it("shows the API's errors as it gives them", async () => {
    await onPage(
      'errors',
      origin(),
      async (page) => {
        const text = 'a'.repeat(5001);
        await page.fill('#text', text);
        expect(await page.textContent('#text-count')).toContain('1 over the limit');
        await page.click('#synthesize');
        await page.waitForSelector('#speech-error:not([hidden])');
        const direct = await t.app.inject({ method: 'POST', url: '/tts', payload: { text, voice: 'espeak-ng:en-us' } });
        const { error } = direct.json<ErrorBody>();
        const shown = (await page.textContent('#speech-error')) ?? '';
        expect(shown).toContain(`400 ${error.code}`);
        expect(shown).toContain(error.message);
        expect(shown).toContain(`field: ${error.field ?? 'missing'}`);

        await page.fill('#text', 'Fine text.');
        await page.fill('#fps', '70');
        await page.click('#make-video');
        await page.waitForSelector('#video-error:not([hidden])');
        expect(await page.textContent('#video-error')).toMatch(/400 VALIDATION_ERROR.*fps.*field: fps/s);
      },
      { allowed: FAILED_FETCH },
    );
  });

  it('asks for the API key when the API answers 401, then works with it', async () => {
    await onPage(
      'api-key-accepted',
      keyed.origin(),
      async (page) => {
        expect(await page.textContent('#voice-error')).toContain('401 UNAUTHORIZED');
        expect(await inPage(page, `document.activeElement.id`)).toBe('api-key');
        await screenshot(page, 'api-key');
        await page.fill('#api-key', KEY);
        await page.press('#api-key', 'Enter');
        await page.waitForSelector('#voice-list li');
        expect(await page.isHidden('#key-panel')).toBe(true);

        await chooseVoice(page, 'espeak-ng:en-us');
        await page.fill('#text', 'With a key.');
        await page.click('#synthesize');
        await page.waitForSelector('#speech-result:not([hidden])');
        expect(await inPage(page, `document.querySelector('#speech-audio').src`)).toMatch(/\/files\/audio\/[\w-]{22}\.mp3$/);
        const curl = (await page.textContent('#speech-curl')) ?? '';
        expect(curl).toContain('authorization: Bearer $VOXREEL_KEY');
        expect(curl).not.toContain(KEY);

        // Kept in this browser: the next visit needs no key.
        await page.reload();
        await page.waitForSelector('#voice-list li');
        expect(await page.isHidden('#key-panel')).toBe(true);
      },
      { allowed: FAILED_FETCH, ready: '#key-panel:not([hidden])' },
    );
  });

  it('is usable with the keyboard alone: Tab reaches the text and Synthesize, with a visible focus', async () => {
    await onPage('keyboard', origin(), async (page) => {
      const reached: string[] = [];
      for (let presses = 0; presses < 20 && !reached.includes('synthesize'); presses += 1) {
        await page.keyboard.press('Tab');
        reached.push(await inPage<string>(page, `document.activeElement.id`));
      }
      expect(reached).toContain('text');
      expect(reached.indexOf('synthesize')).toBeGreaterThan(reached.indexOf('text'));
      expect(await inPage(page, `getComputedStyle(document.activeElement).outlineStyle`)).toBe('solid');
      await screenshot(page, 'keyboard-focus');
      await inPage(page, `document.querySelector('#speech-audio').muted = true`);
      await page.keyboard.press('Enter');
      await page.waitForSelector('#speech-result:not([hidden])', { timeout: 20_000 });
    });
  });

  it('shows the API docs under their content security policy, which blocks none of their own scripts', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    try {
      const response = await page.goto(`${origin()}/docs`);
      expect(response?.headers()['content-security-policy']).toMatch(/script-src/);
      expect(response?.headers()['x-content-type-options']).toBe('nosniff');
      await page.waitForSelector('.opblock-summary-path', { timeout: 15_000 });
      expect(await page.locator('.opblock-summary-path').count()).toBeGreaterThan(5);
    } finally {
      await context.close();
    }
    expect(problems).toEqual([]);
  });

  it('fits a narrow window', async () => {
    await onPage(
      'narrow',
      origin(),
      async (page) => {
        expect(await inPage<number>(page, `document.documentElement.scrollWidth`)).toBeLessThanOrEqual(360);
      },
      { viewport: { width: 360, height: 740 } },
    );
  });
});
