// The voice picker: GET /voices, searched and filtered, a preview per voice.
import { api, clearError, showError } from './api.js';

/** More than this many matches are not drawn: the search or a filter narrows them. */
const SHOWN = 40;
const ENGINE_NAMES = { piper: 'Piper (neural)', rhvoice: 'RHVoice', festival: 'Festival', flite: 'Flite', 'espeak-ng': 'eSpeak NG' };

const $ = (id) => document.getElementById(id);

const displayNames = new Intl.DisplayNames(['en'], { type: 'language' });

function languageName(tag) {
  try {
    return displayNames.of(tag) ?? tag;
  } catch {
    return tag;
  }
}

const primary = (tag) => tag.split('-')[0].toLowerCase();

export class VoicePicker {
  constructor({ onUnauthorized }) {
    this.voices = [];
    /** What the search looks in, by voice id. */
    this.searchable = new Map();
    this.selected = undefined;
    this.onUnauthorized = onUnauthorized;
    this.previews = new Map();
    this.playing = undefined;
    this.list = $('voice-list');
    this.status = $('voice-status');
    this.error = $('voice-error');
    this.audio = $('preview-audio');
    this.filters = {
      search: $('voice-search'),
      language: $('voice-language'),
      gender: $('voice-gender'),
      engine: $('voice-engine'),
      recommended: $('voice-recommended'),
    };
    for (const control of Object.values(this.filters)) control.addEventListener('input', () => this.render());
    this.list.addEventListener('change', (event) => {
      if (event.target.name === 'voice') this.select(this.voices.find((voice) => voice.id === event.target.value));
    });
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button[data-voice]');
      if (button) void this.preview(button);
    });
    this.audio.addEventListener('ended', () => this.stopPreview());
  }

  async load() {
    this.status.textContent = 'Loading voices…';
    clearError(this.error);
    try {
      const response = await api('/voices');
      this.voices = (await response.json()).voices;
      this.searchable = new Map(this.voices.map((voice) => [voice.id, `${voice.id} ${voice.name} ${voice.language} ${languageName(voice.language)}`.toLowerCase()]));
    } catch (error) {
      this.status.textContent = 'The voices could not be loaded.';
      showError(this.error, error);
      if (error.status === 401) this.onUnauthorized();
      return false;
    }
    this.fillOptions();
    if (!this.selected || !this.voices.some((voice) => voice.id === this.selected.id)) {
      this.select(this.defaultVoice());
      // Start with the chosen voice's language: the list opens on it and its neighbours.
      if (this.selected) this.filters.language.value = primary(this.selected.language);
    }
    this.render();
    return true;
  }

  /** The recommended voice for the browser's language, else for US English, else the first. */
  defaultVoice() {
    const wanted = (navigator.language || 'en-US').toLowerCase();
    const recommended = this.voices.filter((voice) => voice.recommended);
    return (
      recommended.find((voice) => voice.language.toLowerCase() === wanted) ??
      recommended.find((voice) => primary(voice.language) === primary(wanted)) ??
      recommended.find((voice) => voice.language === 'en-US') ??
      this.voices[0]
    );
  }

  fillOptions() {
    const languages = [...new Set(this.voices.map((voice) => primary(voice.language)))]
      .map((code) => ({ code, name: languageName(code) }))
      .sort((a, b) => a.name.localeCompare(b.name));
    const engines = [...new Set(this.voices.map((voice) => voice.engine))];
    const option = (value, label) => Object.assign(document.createElement('option'), { value, textContent: label });
    const { language, engine } = this.filters;
    const kept = [language.value, engine.value];
    language.replaceChildren(option('', 'All languages'), ...languages.map(({ code, name }) => option(code, `${name} (${code})`)));
    engine.replaceChildren(option('', 'All engines'), ...engines.map((name) => option(name, ENGINE_NAMES[name] ?? name)));
    [language.value, engine.value] = kept;
  }

  matches() {
    const terms = this.filters.search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const language = this.filters.language.value;
    const gender = this.filters.gender.value;
    const engine = this.filters.engine.value;
    const recommended = this.filters.recommended.checked;
    return this.voices.filter((voice) => {
      if (language && primary(voice.language) !== language) return false;
      if (gender && (voice.gender ?? 'none') !== gender) return false;
      if (engine && voice.engine !== engine) return false;
      if (recommended && !voice.recommended) return false;
      const searchable = this.searchable.get(voice.id) ?? '';
      return terms.every((term) => searchable.includes(term));
    });
  }

  render() {
    const matching = this.matches();
    const shown = matching.slice(0, SHOWN);
    this.list.replaceChildren(...shown.map((voice, index) => this.item(voice, index)));
    this.list.parentElement.hidden = this.voices.length === 0;
    if (matching.length === 0) this.status.textContent = 'No voice matches.';
    else if (matching.length > shown.length) this.status.textContent = `The first ${shown.length} of ${matching.length} matching voices: search or filter for the others.`;
    else this.status.textContent = `${matching.length} of ${this.voices.length} voices.`;
  }

  item(voice, index) {
    const item = document.createElement('li');
    const radio = Object.assign(document.createElement('input'), { type: 'radio', name: 'voice', id: `voice-${index}`, value: voice.id });
    radio.checked = voice.id === this.selected?.id;
    const label = document.createElement('label');
    label.htmlFor = radio.id;
    const name = Object.assign(document.createElement('span'), { className: 'voice-name', textContent: voice.name });
    const facts = [voice.id, voice.language, voice.gender ?? 'gender not stated', ENGINE_NAMES[voice.engine] ?? voice.engine];
    if (voice.recommended) facts.push('recommended');
    const meta = Object.assign(document.createElement('span'), { className: 'voice-meta', textContent: facts.join(' · ') });
    label.append(name, meta);
    const button = Object.assign(document.createElement('button'), { type: 'button', className: 'secondary small' });
    button.dataset.voice = voice.id;
    button.dataset.name = voice.name;
    previewState(button, this.playing?.id === voice.id ? 'playing' : 'idle');
    item.append(radio, label, button);
    return item;
  }

  select(voice) {
    this.selected = voice;
    $('voice-selected').textContent = voice ? `${voice.name} (${voice.id})` : 'none';
  }

  /** Plays the voice's preview (fetched with the key, so it works where the API needs one); again stops it. */
  async preview(button) {
    const voice = this.voices.find((candidate) => candidate.id === button.dataset.voice);
    if (!voice) return;
    const again = this.playing?.id === voice.id;
    this.stopPreview();
    if (again) return;
    clearError(this.error);
    this.playing = { id: voice.id };
    previewState(button, 'loading');
    try {
      let url = this.previews.get(voice.id);
      if (!url) {
        const response = await api(voice.preview_url);
        url = URL.createObjectURL(await response.blob());
        this.previews.set(voice.id, url);
      }
      if (this.playing?.id !== voice.id) return;
      this.audio.src = url;
      await this.audio.play();
      previewState(this.buttonFor(voice.id), 'playing');
    } catch (error) {
      this.stopPreview();
      showError(this.error, error);
      if (error.status === 401) this.onUnauthorized();
    }
  }

  buttonFor(id) {
    return [...this.list.querySelectorAll('button[data-voice]')].find((button) => button.dataset.voice === id);
  }

  stopPreview() {
    const playing = this.playing;
    this.playing = undefined;
    this.audio.pause();
    if (playing) previewState(this.buttonFor(playing.id), 'idle');
  }
}

const PREVIEW_STATES = { idle: ['Preview', ''], loading: ['Loading…', ' the preview of'], playing: ['Stop', ' the preview of'] };

/** The button's visible word, and its full name for screen readers (which starts with that word). */
function previewState(button, state) {
  if (!button) return;
  const [word, joiner] = PREVIEW_STATES[state];
  const rest = Object.assign(document.createElement('span'), { className: 'visually-hidden', textContent: `${joiner} ${button.dataset.name}` });
  button.replaceChildren(word, rest);
}
