"""A TCP proxy that cuts uploads, for the resumable-upload tests; standard library alone.

    python3 cutting_proxy.py PORT TARGET_PORT[,TARGET_PORT...] CUT_AFTER CUTS LOG

Forwards every connection to 127.0.0.1:TARGET_PORT; with several, to each in turn (a load
balancer that is not sticky), skipping one that refuses the connection (a receiver that
died). With several targets, each connection appends `connected to TARGET_PORT` to LOG. The first CUTS connections that carry
more than CUT_AFTER bytes from the client are closed (both ways, at once) once they have
carried CUT_AFTER: the request is cut in the middle of its body. Each cut appends a line
`cut after N bytes` to LOG.
"""
import asyncio
import sys

PORT, CUT_AFTER, CUTS, LOG = int(sys.argv[1]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
TARGETS = [int(port) for port in sys.argv[2].split(",")]
cuts_left = CUTS
next_target = 0


async def connect():
    """A connection to the next target in turn that takes it."""
    global next_target
    for _ in range(len(TARGETS)):
        port = TARGETS[next_target % len(TARGETS)]
        next_target += 1
        try:
            connection = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            continue
        if len(TARGETS) > 1:
            with open(LOG, "a") as handle:
                handle.write(f"connected to {port}\n")
        return connection
    raise ConnectionRefusedError("no target takes connections")


async def upstream(reader, writer, cut):
    """Forwards client bytes; returns when the client is done or the cut comes."""
    global cuts_left
    sent = 0
    try:
        while data := await reader.read(65536):
            if cut and sent + len(data) > CUT_AFTER and cuts_left > 0:
                cuts_left -= 1
                writer.write(data[: CUT_AFTER - sent])
                await writer.drain()
                with open(LOG, "a") as handle:
                    handle.write(f"cut after {CUT_AFTER} bytes\n")
                return True
            sent += len(data)
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass
    return False


async def downstream(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except ConnectionError:
        pass


async def handle(client_reader, client_writer):
    try:
        server_reader, server_writer = await connect()
    except OSError:
        client_writer.transport.abort()
        return
    up = asyncio.ensure_future(upstream(client_reader, server_writer, True))
    down = asyncio.ensure_future(downstream(server_reader, client_writer))
    done, _ = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
    if up in done and up.result():
        # The cut: both connections end at once.
        down.cancel()
        for writer in (server_writer, client_writer):
            writer.transport.abort()
        return
    if up in done:
        # The client is done sending: the server may still answer.
        try:
            server_writer.write_eof()
        except (OSError, RuntimeError):
            pass
        await down
    else:
        # The server closed (an idle keep-alive connection, say): so does the client's, or
        # a request sent on it later would wait for an answer forever.
        up.cancel()
    server_writer.close()
    client_writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", PORT)
    async with server:
        await server.serve_forever()


asyncio.run(main())
