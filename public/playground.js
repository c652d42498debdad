// The playground page: text, voice, /tts with word highlighting, /tts-video with every option.
import { api, apiKey, clearError, curlCommand, setApiKey, showError } from './api.js';
import { VoicePicker } from './voices.js';

/** The API's limit on `text`, in characters (code points, as the API counts them). */
const MAX_TEXT = 5000;

const $ = (id) => document.getElementById(id);

// API key: asked for when the API answers 401, kept in localStorage.

const keyPanel = $('key-panel');
const voices = new VoicePicker({ onUnauthorized: askForKey });

function askForKey() {
  keyPanel.hidden = false;
  $('show-key').setAttribute('aria-expanded', 'true');
  $('key-reason').textContent = 'This service needs an API key. It is kept in this browser only (localStorage) and sent with every call.';
  $('api-key').focus();
}

$('show-key').addEventListener('click', () => {
  keyPanel.hidden = !keyPanel.hidden;
  $('show-key').setAttribute('aria-expanded', String(!keyPanel.hidden));
  if (!keyPanel.hidden) $('api-key').focus();
});

$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  setApiKey($('api-key').value.trim());
  $('api-key').value = '';
  if (await voices.load()) {
    keyPanel.hidden = true;
    $('show-key').setAttribute('aria-expanded', 'false');
    $('text').focus();
  }
});

$('forget-key').addEventListener('click', () => {
  setApiKey('');
  $('api-key').value = '';
  $('key-reason').textContent = 'The key is forgotten: this browser no longer sends one.';
});

// Text, with a counter against the limit.

const text = $('text');

function countText() {
  const count = [...text.value].length;
  const counter = $('text-count');
  counter.textContent = count > MAX_TEXT ? `${count} / ${MAX_TEXT} characters: ${count - MAX_TEXT} over the limit` : `${count} / ${MAX_TEXT} characters`;
  counter.classList.toggle('over', count > MAX_TEXT);
}
text.addEventListener('input', countText);

/** A range input's value, shown beside its label. */
function showRange(input, output) {
  const show = () => {
    output.value = `${Number(input.value).toFixed(2)}×`;
  };
  input.addEventListener('input', show);
  show();
}
showRange($('speed'), $('speed-value'));
showRange($('font-size'), $('font-size-value'));

/** Runs one API action: its button, status line and error region, and the key panel on a 401. */
async function action({ button, status, error, busyText }, work) {
  if (button.getAttribute('aria-disabled') === 'true') return;
  const label = button.textContent;
  button.setAttribute('aria-disabled', 'true');
  button.textContent = busyText;
  status.textContent = busyText;
  clearError(error);
  const started = performance.now();
  try {
    await work();
    status.textContent = `Done in ${((performance.now() - started) / 1000).toFixed(1)} s.`;
  } catch (failure) {
    status.textContent = 'Failed.';
    showError(error, failure);
    if (failure.status === 401) askForKey();
  } finally {
    button.removeAttribute('aria-disabled');
    button.textContent = label;
  }
}

function chosenVoice() {
  if (!voices.selected) throw new Error('Choose a voice first.');
  return voices.selected.id;
}

function fact(list, term, value) {
  const dt = Object.assign(document.createElement('dt'), { textContent: term });
  const dd = Object.assign(document.createElement('dd'), { textContent: value });
  list.append(dt, dd);
}

function link(href, label) {
  return Object.assign(document.createElement('a'), { href, textContent: label });
}

function showFacts(list, result, extra = []) {
  list.replaceChildren();
  fact(list, 'Duration', `${result.duration.toFixed(2)} s`);
  fact(list, 'Cost', `${result.cost} ${result.currency}`);
  fact(list, 'Characters', String(result.characters));
  fact(list, 'Size', `${(result.bytes / 1024).toFixed(1)} KiB`);
  for (const [term, value] of extra) fact(list, term, value);
}

// Speech: POST /tts with timestamps, played with each word highlighted as it is spoken.

const audio = $('speech-audio');
const reader = $('reader');
let following;

/** Wraps each word of `sent` in a span (its offsets index the text exactly as sent) and returns the spans. */
function showWords(sent, words) {
  const spans = [];
  const parts = [];
  let at = 0;
  words.forEach((word, index) => {
    if (word.text_offset > at) parts.push(sent.slice(at, word.text_offset));
    const span = Object.assign(document.createElement('span'), { className: 'word', textContent: sent.slice(word.text_offset, word.text_offset + word.text_length) });
    span.dataset.index = String(index);
    span.dataset.start = String(word.start);
    spans.push(span);
    parts.push(span);
    at = word.text_offset + word.text_length;
  });
  if (at < sent.length) parts.push(sent.slice(at));
  reader.replaceChildren(...parts);
  return spans;
}

/** The last word that has begun by `time` (words are in order), or -1. */
function wordAt(words, time) {
  let low = 0;
  let high = words.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (words[middle].start <= time) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/** Highlights the word being spoken: every animation frame while playing, and on each time update or seek. */
function followWords(words, spans) {
  following?.abort();
  following = new AbortController();
  const { signal } = following;
  let current = -1;
  let frame = 0;
  const update = () => {
    const index = audio.ended ? -1 : wordAt(words, audio.currentTime);
    if (index === current) return;
    spans[current]?.classList.remove('current');
    spans[index]?.classList.add('current');
    current = index;
  };
  const tick = () => {
    update();
    frame = audio.paused ? 0 : requestAnimationFrame(tick);
  };
  audio.addEventListener('play', () => {
    cancelAnimationFrame(frame);
    frame = requestAnimationFrame(tick);
  }, { signal });
  for (const type of ['timeupdate', 'seeked', 'ended']) audio.addEventListener(type, update, { signal });
  signal.addEventListener('abort', () => cancelAnimationFrame(frame));
}

reader.addEventListener('click', (event) => {
  const start = event.target.closest?.('.word')?.dataset.start;
  if (start === undefined) return;
  audio.currentTime = Number(start);
  void audio.play().catch(() => undefined);
});

$('speech-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const button = $('synthesize');
  void action({ button, status: $('speech-status'), error: $('speech-error'), busyText: 'Synthesizing…' }, async () => {
    const request = { text: text.value, voice: chosenVoice(), format: $('format').value, speed: Number($('speed').value), timestamps: true };
    const result = await (await api('/tts', { method: 'POST', json: request })).json();
    $('speech-result').hidden = false;
    followWords(result.words ?? [], showWords(request.text, result.words ?? []));
    audio.src = result.url;
    showFacts($('speech-facts'), result, [['Voice', result.voice], ['Format', result.format]]);
    $('speech-links').replaceChildren(
      link(result.url, 'Audio file'),
      ...(result.captionsUrl ? [' · ', link(result.captionsUrl, 'WebVTT captions')] : []),
      ...(result.srtUrl ? [' · ', link(result.srtUrl, 'SRT captions')] : []),
    );
    $('speech-curl').textContent = curlCommand('/tts', { json: request });
    // The page was asked to speak: start at once where the browser allows it, else the controls are there.
    void audio.play().catch(() => undefined);
  });
});

// Video: POST /tts-video with every option; images and music are uploaded first with POST /assets.

const uploads = { image: undefined, clip: undefined, music: undefined, scenes: undefined };

/**
 * Uploads the chosen files as soon as they are chosen, so that a refusal shows at once; the asset ids wait for the
 * video. A `multiple` input keeps a list, in the order chosen.
 */
function uploadOnChange(kind, input, status, error) {
  input.addEventListener('change', async () => {
    uploads[kind] = undefined;
    clearError(error);
    const files = [...(input.files ?? [])];
    if (files.length === 0) {
      status.textContent = '';
      return;
    }
    status.textContent = `Uploading ${files.map((file) => file.name).join(', ')}…`;
    try {
      const uploaded = [];
      for (const file of files) {
        const form = new FormData();
        form.append('file', file);
        uploaded.push({ asset: await (await api('/assets', { method: 'POST', form })).json(), fileName: file.name });
      }
      uploads[kind] = input.multiple ? uploaded : uploaded[0];
      const sizes = uploaded.map(({ asset }) => (asset.width ? `${asset.width}×${asset.height}` : `${asset.duration.toFixed(1)} s`));
      status.textContent = `Uploaded: ${uploaded.map(({ asset }, index) => `${asset.format}, ${sizes[index]}, id ${asset.id}`).join('; ')}.`;
    } catch (failure) {
      status.textContent = '';
      showError(error, failure);
      if (failure.status === 401) askForKey();
    }
  });
}
uploadOnChange('image', $('image-file'), $('image-status'), $('image-error'));
uploadOnChange('music', $('music-file'), $('music-status'), $('music-error'));
uploadOnChange('scenes', $('scene-files'), $('scene-status'), $('scene-error'));
uploadOnChange('clip', $('clip-file'), $('clip-status'), $('clip-error'));

function backgroundKind() {
  return document.querySelector('input[name="background"]:checked').value;
}

function showBackgroundFields() {
  const kind = backgroundKind();
  for (const option of ['color', 'gradient', 'image', 'video']) $(`background-${option}-fields`).hidden = option !== kind;
}
for (const radio of document.querySelectorAll('input[name="background"]')) radio.addEventListener('change', showBackgroundFields);
showBackgroundFields();

$('loudness-off').addEventListener('change', () => {
  $('loudness').disabled = $('loudness-off').checked;
});

function videoBackground() {
  const kind = backgroundKind();
  if (kind === 'color') return $('background-colour').value;
  if (kind === 'gradient') return { gradient: [$('gradient-from').value, $('gradient-to').value], direction: $('gradient-direction').value };
  if (kind === 'video') {
    if (!uploads.clip) throw new Error('Choose a video clip for the background first (it is uploaded with POST /assets).');
    return { video: uploads.clip.asset.id };
  }
  if (!uploads.image) throw new Error('Choose an image for the background first (it is uploaded with POST /assets).');
  const motion = $('image-motion').value;
  return motion ? { image: uploads.image.asset.id, motion } : { image: uploads.image.asset.id };
}

/** A platform sets the frame it posts (the fields stay editable, and what they say is sent). */
const PLATFORM_FRAMES = { tiktok: ['1080p', '9:16'], reels: ['1080p', '9:16'], shorts: ['1080p', '9:16'], youtube: ['1080p', '16:9'], 'instagram-feed': ['1080p', '4:5'] };
$('platform').addEventListener('change', () => {
  const frame = PLATFORM_FRAMES[$('platform').value];
  if (!frame) return;
  [$('resolution').value, $('aspect-ratio').value] = frame;
});
$('caption-outline').addEventListener('input', () => {
  $('caption-outline').dataset.unset = 'false';
  $('caption-outline-value').value = `${Number($('caption-outline').value).toFixed(2)}× size`;
});

function videoRequest() {
  const request = {
    text: text.value,
    voice: chosenVoice(),
    resolution: $('resolution').value,
    aspect_ratio: $('aspect-ratio').value,
    fps: Number($('fps').value),
    frame_rate: $('frame-rate').value,
    subtitles: $('subtitles').checked,
    caption_style: $('caption-style').value,
    font: $('font').value,
    caption_color: $('caption-color').value,
    highlight_color: $('highlight-color').value,
    font_size: Number($('font-size').value),
    background: videoBackground(),
    loudness: $('loudness-off').checked ? false : Number($('loudness').value),
  };
  if ($('position').value) request.position = $('position').value;
  if ($('platform').value) request.platform = $('platform').value;
  if ($('title').value.trim()) request.title = $('title').value.trim();
  if ($('caption-case').value !== 'as-written') request.caption_case = $('caption-case').value;
  if ($('caption-outline').dataset.unset !== 'true') request.caption_outline = Number($('caption-outline').value);
  if ($('highlight-box').checked) request.highlight_box = true;
  if ($('progress-bar').checked) request.progress_bar = true;
  if (uploads.music) request.music = { id: uploads.music.asset.id, volume: Number($('music-volume').value) };
  // One image per sentence: the first from the start, the next as the second sentence starts, and so on.
  if (uploads.scenes) request.scenes = uploads.scenes.map((upload, sentence) => ({ background: { image: upload.asset.id }, sentence }));
  if ($('transition').value !== 'cut') request.transition = $('transition').value;
  return request;
}

function videoCurl(request) {
  const steps = [];
  for (const upload of [uploads.image, uploads.clip, uploads.music, ...(uploads.scenes ?? [])]) {
    if (upload && JSON.stringify(request).includes(upload.asset.id)) {
      steps.push(`# uploaded once, then named by its id (${upload.asset.id}):`, curlCommand('/assets', { file: upload.fileName }));
    }
  }
  steps.push(curlCommand('/tts-video', { json: request }));
  return steps.join('\n');
}

$('video-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const button = $('make-video');
  void action({ button, status: $('video-status'), error: $('video-error'), busyText: 'Making the video…' }, async () => {
    const request = videoRequest();
    const result = await (await api('/tts-video', { method: 'POST', json: request })).json();
    const video = $('video');
    $('video-result').hidden = false;
    video.src = result.url;
    showFacts($('video-facts'), result, [['Picture', `${result.width}×${result.height}, ${result.fps} fps, ${result.frameRate} rate`], ['Voice', result.voice]]);
    $('video-links').replaceChildren(link(result.url, 'Video file'), ' · ', link(result.captionsUrl, 'WebVTT captions'));
    $('video-curl').textContent = videoCurl(request);
    void video.play().catch(() => undefined);
  });
});

countText();
$('key-reason').textContent = apiKey() ? 'A key is kept in this browser and sent with every call.' : 'No key is kept in this browser; an open service needs none.';
void voices.load();
