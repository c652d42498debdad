import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { jobClient } from '../job-client.js';
import { roundSeconds, videoCost } from '../pricing.js';
import { ErrorBody, TtsVideoRequest, TtsVideoResponse } from '../schemas.js';
import { VideoMaker } from '../../video/maker.js';
import type { AssetStore } from '../../assets/store.js';
import type { Background } from '../../video/background.js';
import type { BackgroundOption } from '../../video/options.js';

const ttsVideoRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const maker = new VideoMaker({
    synthesizer: app.synthesizer,
    ffmpeg: app.ffmpeg,
    storage: app.storage,
    splicer: app.splicer,
    scratch: app.scratch,
    keyframeSeconds: app.config.keyframeSeconds,
  });
  app.post(
    '/tts-video',
    {
      schema: {
        tags: ['speech'],
        summary: 'Text to a narrated video with word-by-word captions',
        body: TtsVideoRequest,
        response: { 200: TtsVideoResponse, '4xx': ErrorBody, '5xx': ErrorBody },
      },
    },
    async (request) => {
      const { text, voice, resolution = '1080p', aspect_ratio = '16:9', subtitles = true, fps = 30, frame_rate = 'constant' } = request.body;
      const { caption_style, font, caption_color, highlight_color, position, font_size } = request.body;
      const look = { style: caption_style, family: font, textColour: hex(caption_color), highlightColour: hex(highlight_color), position, scale: font_size };
      const job = { text, voice, resolution, aspectRatio: aspect_ratio, subtitles, fps, frameRate: frame_rate, look };
      const resolved = maker.resolveVoice(job);
      const background = await backgroundOf(request.body.background, app.assets);
      const { music: musicOption, loudness } = request.body;
      const track = musicOption && (await app.assets.resolve(musicOption.id, 'audio', 'music.id'));
      const music = musicOption && track && { file: track.path, loudness: track.loudness, volume: musicOption.volume };
      const result = await app.jobs.run('tts-video', jobClient(request, text.length), (signal) =>
        maker.make({ ...job, voice: resolved, background, music, loudness: loudness === false ? null : loudness, signal, onWarning: (message, err) => request.log.warn({ err }, message) }),
      );
      request.log.info({ ...job, text: undefined, background: background?.type, music: Boolean(music), characters: text.length, file: result.video.key }, 'video stored');
      return {
        status: 'success' as const,
        url: result.video.url,
        captionsUrl: result.captions.url,
        duration: roundSeconds(result.duration),
        cost: videoCost(app.config.pricing, text.length, result.duration),
        currency: app.config.pricing.currency,
        width: result.size.width,
        height: result.size.height,
        fps,
        frameRate: frame_rate,
        subtitles,
        voice,
        characters: text.length,
        bytes: result.video.bytes,
      };
    },
  );
};

/** "#ffd23f" → "FFD23F", as the renderer takes colours. */
function hex(colour: string | undefined): string | undefined {
  return colour?.replace(/^#/, '').toUpperCase();
}

/** The request's background for the renderer; an image asset is looked up now, before the job is queued. */
async function backgroundOf(option: BackgroundOption | undefined, assets: AssetStore): Promise<Background | undefined> {
  if (option === undefined) return undefined;
  if (typeof option === 'string') return { type: 'color', color: hex(option) as string };
  if ('gradient' in option) {
    const [from, to] = option.gradient.map((colour) => hex(colour) as string) as [string, string];
    return { type: 'gradient', colors: [from, to], direction: option.direction ?? 'vertical' };
  }
  return { type: 'image', file: (await assets.resolve(option.image, 'image', 'background.image')).path };
}

export default ttsVideoRoutes;
