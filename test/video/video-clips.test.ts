// Issue 24: clips as backgrounds. POST /assets takes MP4, MOV and WebM (H.264, VP9, AV1), sniffed, probed, bounded
// and decoded whole; a clip covers the frame, loops, and is never heard. Real files made by ffmpeg, real decodes.
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { TtsVideoResponse } from '../../src/api/video.js';
import { decodeErrors, decodeFrame, probe, runFfmpeg } from '../helpers/media.js';
import { multipartForm, useTestApp } from '../helpers/helpers.js';
import { useTempDir } from '../helpers/temp-dir.js';

const FPS = 30;
const dir = useTempDir('voxreel-clips-');
const file = (name: string) => path.join(dir, name);

/** Half a second of red, then half a second of blue, at `size`, with a tone beside it (never to be heard). */
function redThenBlue(size: string, seconds = 1, after = ''): string[] {
  const half = seconds / 2;
  return [
    '-v', 'error', '-y',
    '-f', 'lavfi', '-i', `color=c=0xE01010:s=${size}:r=${FPS}:d=${half}`,
    '-f', 'lavfi', '-i', `color=c=0x1030E0:s=${size}:r=${FPS}:d=${half}`,
    '-f', 'lavfi', '-i', `sine=f=1000:d=${seconds}`,
    '-filter_complex', `[0:v][1:v]concat=n=2:v=1:a=0${after}[v]`, '-map', '[v]', '-map', '2:a',
  ];
}

beforeAll(async () => {
  const h264 = ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac'];
  await Promise.all([
    runFfmpeg([...redThenBlue('640x360'), ...h264, '-movflags', '+faststart', file('clip.mp4')]),
    // As phones write them: BT.709, tagged so; at the 720p portrait frame's own size.
    runFfmpeg([
      ...redThenBlue('720x1280', 1, ',scale=out_color_matrix=bt709:out_range=tv'), ...h264,
      '-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709', '-color_range', 'tv', file('phone.mp4'),
    ]),
    runFfmpeg([...redThenBlue('640x360'), '-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-c:a', 'libopus', file('clip.webm')]),
    runFfmpeg([...redThenBlue('640x360'), ...h264, '-f', 'mov', file('clip.mov')]),
    runFfmpeg([...redThenBlue('160x90', 6), ...h264, file('long.mp4')]),
    runFfmpeg([...redThenBlue('1280x800'), ...h264, file('large.mp4')]),
    runFfmpeg([...redThenBlue('320x180'), '-c:v', 'mpeg4', '-c:a', 'aac', file('mpeg4.mp4')]),
    runFfmpeg([...redThenBlue('320x180'), '-c:v', 'libvpx', '-deadline', 'realtime', '-c:a', 'libopus', file('vp8.webm')]),
    // A still picture in a QuickTime file: a video's wrapper around an image.
    runFfmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=red:s=320x180', '-frames:v', '1', '-c:v', 'png', '-f', 'mov', file('picture.mov')]),
    runFfmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=red:s=320x180', '-frames:v', '1', file('photo.jpg')]),
    runFfmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=440:d=2', '-c:a', 'aac', '-f', 'mp4', file('sound.mp4')]),
  ]);
  const whole = await readFile(file('clip.mp4'));
  await writeFile(file('truncated.mp4'), whole.subarray(0, Math.floor(whole.length * 0.6)));
});

describe('video clips', () => {
  const t = useTestApp({ ASSET_MAX_VIDEO_SECONDS: '4', ASSET_MAX_VIDEO_PIXELS: '1000000' });

  const upload = async (name: string, as = name) => {
    const form = multipartForm([{ name: 'file', filename: as, content: await readFile(file(name)) }]);
    return t.app.inject({ method: 'POST', url: '/assets', payload: form.payload, headers: form.headers });
  };

  it('takes MP4 and MOV with H.264 and WebM with VP9, by their bytes, with their size and decoded length; an MP4 of sound alone is music', async () => {
    for (const [name, format] of [['clip.mp4', 'mp4'], ['clip.mov', 'mov'], ['clip.webm', 'webm']] as const) {
      const response = await upload(name, 'upload.bin');
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json()).toMatchObject({ kind: 'video', format, width: 640, height: 360 });
      expect(Math.abs(response.json<{ duration: number }>().duration - 1)).toBeLessThan(0.05);
    }
    const sound = await upload('sound.mp4');
    expect(sound.statusCode, sound.body).toBe(201);
    expect(sound.json()).toMatchObject({ kind: 'audio', format: 'm4a' });
  });

  it('refuses a truncated clip, one too long, one of too many pixels, other codecs, and a picture dressed as a video', async () => {
    const before = await t.listFiles();
    const refused = async (name: string, status: number, code: string, message?: RegExp) => {
      const response = await upload(name);
      expect(response.statusCode, `${name}: ${response.body}`).toBe(status);
      expect(response.json()).toMatchObject({ error: { code, field: 'file' } });
      if (message) expect(response.json<{ error: { message: string } }>().error.message).toMatch(message);
    };
    await refused('truncated.mp4', 422, 'INVALID_ASSET');
    await refused('long.mp4', 413, 'ASSET_TOO_LARGE', /lasts 6 s; the limit is 4 s/);
    await refused('large.mp4', 413, 'ASSET_TOO_LARGE', /1280×800/);
    await refused('mpeg4.mp4', 415, 'UNSUPPORTED_ASSET', /mpeg4/);
    await refused('vp8.webm', 415, 'UNSUPPORTED_ASSET', /vp8/);
    await refused('picture.mov', 415, 'UNSUPPORTED_ASSET', /png/);
    // A photo named like a video is the photo it is: it cannot stand where a clip goes.
    const photo = await upload('photo.jpg', 'clip.mp4');
    expect(photo.json()).toMatchObject({ kind: 'image', format: 'jpeg' });
    const video = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { text: 'Hi.', voice: 'espeak-ng:en-us', background: { video: photo.json<{ id: string }>().id } } });
    expect(video.statusCode).toBe(422);
    expect(video.json()).toMatchObject({ error: { code: 'UNKNOWN_ASSET', field: 'background.video' } });
    // Nothing of the refused files stays behind: the photo is all that was added.
    const added = (await t.listFiles()).filter((name) => !before.includes(name));
    expect(added.filter((name) => !name.includes(photo.json<{ id: string }>().id))).toEqual([]);
  });

  it('covers the frame with a clip, looped to the narration, as a background and as a scene (from its own start), never heard', async () => {
    const uploaded = await upload('clip.mp4');
    const id = uploaded.json<{ id: string }>().id;
    const body = { text: 'A clip plays behind these words, over and over again.', voice: 'espeak-ng:en-us', resolution: '720p', aspect_ratio: '9:16', subtitles: false };
    const corner = async (video: string, frame: number) => {
      const picture = await decodeFrame(video, frame, FPS);
      return [picture[0] as number, picture[1] as number, picture[2] as number];
    };
    const near = (actual: number[], expected: number[]) => actual.every((value, index) => Math.abs(value - (expected[index] as number)) <= 12);
    const RED = [224, 16, 16];
    const BLUE = [16, 48, 224];
    const GREEN = [16, 160, 48];

    const made = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: { video: id } } });
    expect(made.statusCode, made.body).toBe(200);
    const result = made.json<TtsVideoResponse>();
    expect(result).toMatchObject({ renderPath: 'moving', frameRate: 'constant', width: 720, height: 1280 });
    const output = path.join(t.outputDir, 'video', path.basename(result.url));
    expect(await decodeErrors(output)).toBe('');
    expect(result.duration).toBeGreaterThan(2);
    // Red, blue, red again: the one-second clip starts over.
    for (const [frame, colour] of [[7, RED], [22, BLUE], [37, RED], [52, BLUE]] as const) expect(near(await corner(output, frame), colour), `frame ${frame}: ${await corner(output, frame)}`).toBe(true);
    // One audio stream, sample for sample the one the same narration has over a colour: the clip's tone is not in it.
    const { streams } = await probe(output);
    expect(streams.filter((stream) => stream.codecType === 'audio')).toHaveLength(1);
    const plain = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: '#000000' } });
    const audioHash = async (video: string) => (await runFfmpeg(['-v', 'error', '-i', video, '-map', '0:a', '-f', 'md5', '-'])).stdout.toString();
    expect(await audioHash(output)).toBe(await audioHash(path.join(t.outputDir, 'video', path.basename(plain.json<TtsVideoResponse>().url))));

    // A BT.709 clip at the frame's size is taken as it is (no scaler), and looks the same.
    const phoneUpload = await upload('phone.mp4');
    expect(phoneUpload.statusCode, phoneUpload.body).toBe(201);
    const phone = phoneUpload.json<{ id: string }>().id;
    const [record] = (await t.listFiles()).filter((name) => name.endsWith(`${phone}.json`));
    expect(JSON.parse(await readFile(path.join(t.outputDir, record as string), 'utf8'))).toMatchObject({ bt709: true });
    const asItIs = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: { video: phone } } });
    const asItIsFile = path.join(t.outputDir, 'video', path.basename(asItIs.json<TtsVideoResponse>().url));
    for (const [frame, colour] of [[7, RED], [22, BLUE], [37, RED]] as const) expect(near(await corner(asItIsFile, frame), colour), `frame ${frame}: ${await corner(asItIsFile, frame)}`).toBe(true);

    const scene = await t.app.inject({ method: 'POST', url: '/tts-video', payload: { ...body, background: '#10A030', scenes: [{ background: { video: id }, start: 1 }] } });
    expect(scene.statusCode, scene.body).toBe(200);
    const sceneFile = path.join(t.outputDir, 'video', path.basename(scene.json<TtsVideoResponse>().url));
    for (const [frame, colour] of [[15, GREEN], [37, RED], [52, BLUE], [67, RED]] as const) expect(near(await corner(sceneFile, frame), colour), `frame ${frame}: ${await corner(sceneFile, frame)}`).toBe(true);
  });
});
