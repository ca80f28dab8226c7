"""delay_proxy.py LISTEN_HOST:PORT TARGET_HOST:PORT MS: a TCP forwarder that holds every chunk
MS milliseconds in each direction, keeping its order: a stand-in for `tc netem delay` where
the kernel has no netem qdisc (scripts/bench-rexec.sh). Each byte arrives MS later than sent,
so a round trip costs 2*MS more; bandwidth is not limited. Runs until killed."""
import asyncio
import sys
import time


async def pump(reader, writer, delay):
    q = asyncio.Queue()

    async def later():
        while True:
            due, data = await q.get()
            if data is None:
                break
            await asyncio.sleep(max(0.0, due - time.monotonic()))
            writer.write(data)
            await writer.drain()
        writer.close()

    task = asyncio.create_task(later())
    while True:
        data = await reader.read(65536)
        await q.put((time.monotonic() + delay, data or None))
        if not data:
            break
    await task


async def main():
    lhost, lport = sys.argv[1].rsplit(":", 1)
    thost, tport = sys.argv[2].rsplit(":", 1)
    delay = float(sys.argv[3]) / 1000

    async def handle(r, w):
        try:
            tr, tw = await asyncio.open_connection(thost, int(tport))
        except OSError:
            w.close()
            return
        await asyncio.gather(pump(r, tw, delay), pump(tr, w, delay), return_exceptions=True)

    server = await asyncio.start_server(handle, lhost, int(lport))
    async with server:
        await server.serve_forever()


asyncio.run(main())
