import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { jobClient } from '../job-client.js';
import { roundSeconds, videoCost } from '../pricing.js';
import { ErrorBody, TtsVideoRequest, TtsVideoResponse } from '../schemas.js';
import { VideoMaker } from '../../video/maker.js';

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
      const job = { text, voice, resolution, aspectRatio: aspect_ratio, subtitles, fps, frameRate: frame_rate };
      const resolved = maker.resolveVoice(job);
      const result = await app.jobs.run('tts-video', jobClient(request, text.length), (signal) =>
        maker.make({ ...job, voice: resolved, signal, onWarning: (message, err) => request.log.warn({ err }, message) }),
      );
      request.log.info({ ...job, text: undefined, characters: text.length, file: result.video.key }, 'video stored');
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

export default ttsVideoRoutes;
