"""Home Assistant's way to a Wyoming server: python-zeroconf (PyPI zeroconf, as Home Assistant uses it) browses for
`_wyoming._tcp.local.` on one interface, resolves the service named NAME, and the real Wyoming client (PyPI wyoming)
asks the address it found for `describe`, as Home Assistant's discovery flow does.

    python wyoming_discover.py INTERFACE NAME SECONDS

Prints one JSON object: {"found": false} when NAME was not announced within SECONDS, else its port, addresses,
server and what describe answered (the TTS program's name and its number of voices).
"""
import asyncio
import json
import socket
import sys

from zeroconf import ServiceStateChange
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf
from wyoming.client import AsyncTcpClient
from wyoming.info import Describe, Info

SERVICE = "_wyoming._tcp.local."


async def main(interface: str, name: str, seconds: float) -> dict:
    wanted = f"{name}.{SERVICE}"
    seen = asyncio.Event()

    def changed(zeroconf, service_type, name, state_change):
        if name == wanted and state_change is ServiceStateChange.Added:
            seen.set()

    aiozc = AsyncZeroconf(interfaces=[interface])
    browser = AsyncServiceBrowser(aiozc.zeroconf, [SERVICE], handlers=[changed])
    try:
        try:
            await asyncio.wait_for(seen.wait(), timeout=seconds)
        except asyncio.TimeoutError:
            return {"found": False}
        info = AsyncServiceInfo(SERVICE, wanted)
        if not await info.async_request(aiozc.zeroconf, 3000):
            return {"found": True, "resolved": False}
        addresses = [socket.inet_ntoa(address) for address in info.addresses]
        result = {"found": True, "resolved": True, "port": info.port, "addresses": addresses, "server": info.server}
        async with AsyncTcpClient(addresses[0], info.port) as client:
            await client.write_event(Describe().event())
            while True:
                event = await asyncio.wait_for(client.read_event(), timeout=30)
                if event is None or Info.is_type(event.type):
                    break
        described = Info.from_event(event) if event is not None else None
        program = described.tts[0] if described and described.tts else None
        result["tts"] = {"name": program.name, "voices": len(program.voices)} if program else None
        return result
    finally:
        await browser.async_cancel()
        await aiozc.async_close()


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], float(sys.argv[3])))))
