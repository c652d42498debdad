"""The tests' and the benchmark's judge of speech: what Whisper base hears in a WAV file, and its DNSMOS P.808 score.

Runs in the venv script/install-judge makes (never in the service). One JSON object a line on stdin:
  {"path": "/abs/file.wav", "transcript": true, "dnsmos": true}
and one answer a line on stdout, in the same order:
  {"transcript": "...", "dnsmos": 3.92}  or  {"error": "..."}
The model stays loaded between requests; test/helpers/judge.ts starts one process per test file.

  python judge.py MODEL_DIR [CPU_THREADS]
"""

import json
import sys

from faster_whisper import WhisperModel
from faster_whisper.audio import decode_audio
from speechmos import dnsmos

SAMPLE_RATE = 16000  # what both Whisper and DNSMOS take


def judge(model: WhisperModel, request: dict) -> dict:
    # PyAV decodes and resamples to 16 kHz mono float32, whatever the engine's rate.
    audio = decode_audio(request["path"], sampling_rate=SAMPLE_RATE)
    answer = {}
    if request.get("transcript", True):
        segments, _ = model.transcribe(audio, beam_size=5, language="en", condition_on_previous_text=False)
        answer["transcript"] = " ".join(segment.text.strip() for segment in segments)
    if request.get("dnsmos", True):
        answer["dnsmos"] = round(float(dnsmos.run(audio, sr=SAMPLE_RATE)["p808_mos"]), 3)
    return answer


def main() -> None:
    model_dir = sys.argv[1]
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    model = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=threads)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            answer = judge(model, json.loads(line))
        except Exception as error:  # noqa: BLE001 - the caller gets every failure as an answer, and the process lives on
            answer = {"error": f"{type(error).__name__}: {error}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
