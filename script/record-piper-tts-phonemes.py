"""Records piper-tts's phonemes for the texts of fixtures/piper-tts-phonemes.json, in place.

Run it with the Python of a venv that holds piper-tts 1.8 (no voice is needed: phonemes come from the eSpeak NG
that piper-tts bundles):
    python3 -m venv ~/.cache/voxreel-tools/piper-tts
    ~/.cache/voxreel-tools/piper-tts/bin/pip install 'piper-tts==1.8.*'
    ~/.cache/voxreel-tools/piper-tts/bin/python script/record-piper-tts-phonemes.py
"""

import json
import sys
from importlib.metadata import version
from pathlib import Path

from piper.phonemize_espeak import EspeakPhonemizer

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "piper-tts-phonemes.json"
VOICE = "en-us"


def main() -> None:
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    phonemizer = EspeakPhonemizer()
    for entry in fixture["texts"]:
        # One string per sentence: each code point is one phoneme, as PiperVoice.phonemize gives them for en-us
        # (it also drops an empty last sentence, which eSpeak gives after a closing quote).
        sentences = ["".join(sentence) for sentence in phonemizer.phonemize(VOICE, entry["text"])]
        if sentences and not sentences[-1]:
            sentences.pop()
        entry["sentences"] = sentences
    fixture["piperTts"] = version("piper-tts")
    fixture["voice"] = VOICE
    FIXTURE.write_text(json.dumps(fixture, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{len(fixture['texts'])} texts recorded in {FIXTURE}", file=sys.stderr)


if __name__ == "__main__":
    main()
