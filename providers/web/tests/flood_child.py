"""A local flood for the bounds tests: sockets reconnecting without the token, as fast as they can.

``python flood_child.py HOST PORT SOCKETS SECONDS``: SOCKETS loops, each connecting, sending a
request without the token (every third one sends nothing and just holds the connection until
the server closes it), reading until the server closes, and connecting again, for SECONDS.
Prints the number of connections made. Only ever targets the loopback address it is given.
"""

from __future__ import annotations

import asyncio
import sys


async def one(host: str, port: int, index: int, until: float, made: list[int]) -> None:
    loop = asyncio.get_running_loop()
    while loop.time() < until:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 2)
        except (OSError, asyncio.TimeoutError):
            await asyncio.sleep(0.01)
            continue
        made[0] += 1
        try:
            if index % 3:
                writer.write(f"GET /nope/ HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
            left = until - loop.time()
            while left > 0 and await asyncio.wait_for(reader.read(65536), left):
                left = until - loop.time()
        except (OSError, asyncio.TimeoutError):
            pass
        finally:
            writer.close()


async def main() -> None:
    host, port, sockets, seconds = (
        sys.argv[1],
        int(sys.argv[2]),
        int(sys.argv[3]),
        float(sys.argv[4]),
    )
    assert host.startswith("127."), "the flood only ever targets the loopback"
    until = asyncio.get_running_loop().time() + seconds
    made = [0]
    print("started", flush=True)
    await asyncio.gather(*(one(host, port, index, until, made) for index in range(sockets)))
    print(made[0], flush=True)


if __name__ == "__main__":
    asyncio.run(main())
