"""The tests' and the benchmark's judge of speech: what Whisper base hears in a WAV file, and its DNSMOS P.808 score.

Runs in the venv script/install-judge makes (never in the service). One JSON object a line on stdin:
  {"path": "/abs/file.wav", "transcript": true, "dnsmos": true, "language": "en", "words": false}
and one answer a line on stdout, in the same order:
  {"transcript": "...", "dnsmos": 3.92, "words": [{"word": "Hello", "start": 0.12, "end": 0.4}]}  or  {"error": "..."}
(`words`, when asked: each word Whisper heard and when, its word timestamps).
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
        words = bool(request.get("words", False))
        segments = list(
            model.transcribe(audio, beam_size=5, language=request.get("language", "en"), condition_on_previous_text=False, word_timestamps=words)[0]
        )
        answer["transcript"] = " ".join(segment.text.strip() for segment in segments)
        if words:
            answer["words"] = [
                {"word": word.word.strip(), "start": round(word.start, 3), "end": round(word.end, 3)} for segment in segments for word in segment.words or []
            ]
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
