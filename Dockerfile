# voxreel: docker build -t voxreel . && docker run -p 3000:3000 -v voxreel-data:/data voxreel
FROM node:24-bookworm-slim

# ffmpeg from Debian (libx264, libmp3lame, libvorbis, libass); Festival with the HTS voice for the most natural English.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg festival festvox-us-slt-hts tini \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts: ffmpeg-static's would download a binary we do not use (FFMPEG_PATH points at Debian's).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY tsconfig.json ./
COPY src ./src

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    OUTPUT_DIR=/data \
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
CMD ["node", "--import", "tsx", "src/server.ts"]
