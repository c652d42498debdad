"""The real Wyoming client (PyPI wyoming 1.10.2, as Home Assistant uses it) against voxreel's Wyoming server.

    python wyoming_client.py HOST PORT VOICE_A VOICE_B

Prints one JSON object: what describe listed, each synthesis's audio format, samples and events, the streamed
synthesis, and what garbage got back.
"""
import asyncio
import json
import sys

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped, SynthesizeVoice


async def collect(client, until):
    """Events up to the one `until` accepts: their types, the audio's format and its samples."""
    types, rate, samples = [], None, 0
    while True:
        event = await asyncio.wait_for(client.read_event(), timeout=60)
        if event is None:
            types.append("closed")
            break
        types.append(event.type)
        if AudioStart.is_type(event.type):
            rate = AudioStart.from_event(event).rate
        elif AudioChunk.is_type(event.type):
            chunk = AudioChunk.from_event(event)
            rate = rate or chunk.rate
            samples += chunk.samples
        elif Error.is_type(event.type):
            error = Error.from_event(event)
            return {"types": types, "error": {"text": error.text, "code": error.code}}
        if until(event.type):
            break
    return {"types": types, "rate": rate, "seconds": samples / rate if rate else 0}


async def main(host, port, voice_a, voice_b):
    result = {}
    async with AsyncTcpClient(host, port) as client:
        await client.write_event(Describe().event())
        event = await client.read_event()
        info = Info.from_event(event)
        result["voices"] = [voice.name for program in info.tts for voice in program.voices]
        result["streaming"] = all(program.supports_synthesize_streaming for program in info.tts)
        for name in (voice_a, voice_b):
            await client.write_event(Synthesize(text="Hello from voxreel. This is the second sentence.", voice=SynthesizeVoice(name=name)).event())
            result[name] = await collect(client, AudioStop.is_type)
        await client.write_event(Synthesize(text="Hello there.", voice=SynthesizeVoice(name="espeak-ng:nobody")).event())
        result["unknown"] = await collect(client, lambda _type: True)
        # Streamed, as Home Assistant sends an assistant's answer as it is written, then the plain event it sends for servers that do not stream.
        await client.write_event(SynthesizeStart(voice=SynthesizeVoice(name=voice_a)).event())
        for piece in ("The weather today ", "is sunny. Tomorrow it "):
            await client.write_event(SynthesizeChunk(text=piece).event())
        # A whole sentence has come: its audio starts before the text is done.
        result["before_stop"] = (await asyncio.wait_for(client.read_event(), timeout=30)).type
        for piece in ("will rain, ", "so take an umbrella."):
            await client.write_event(SynthesizeChunk(text=piece).event())
        await client.write_event(SynthesizeStop().event())
        await client.write_event(Synthesize(text="The weather today is sunny. Tomorrow it will rain, so take an umbrella.", voice=SynthesizeVoice(name=voice_a)).event())
        result["streamed"] = await collect(client, SynthesizeStopped.is_type)
        # Nothing follows for the plain event after the streamed one: a describe is answered next.
        await client.write_event(Describe().event())
        result["after"] = (await client.read_event()).type
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(b"this is not an event\n")
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=10)
    result["garbage"] = {"answer": answer.decode("utf8", "replace"), "closed": reader.at_eof()}
    writer.close()
    print(json.dumps(result))


asyncio.run(main(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]))
