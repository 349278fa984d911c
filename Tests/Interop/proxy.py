"""A forward HTTP proxy for the tests, on the standard library alone.

    python3 proxy.py PORT LOG [USER:PASSWORD]

Tunnels CONNECT (what clients use for https://, and AsyncHTTPClient for every URL) and
forwards absolute-form requests (`POST http://host:port/path`) with the request line in
origin form. With USER:PASSWORD it answers 407 to a request without those Basic
credentials. Each request line it accepts or refuses is appended to LOG, as
`CONNECT host:port`, `POST http://…` or `407 CONNECT host:port`.
"""
import asyncio
import base64
import sys

PORT, LOG = int(sys.argv[1]), sys.argv[2]
CREDENTIALS = sys.argv[3] if len(sys.argv) > 3 else None


def log(line):
    with open(LOG, "a") as handle:
        handle.write(line + "\n")


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        try:
            writer.close()
        except Exception:
            pass


async def serve(client_reader, client_writer):
    try:
        head = await client_reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        client_writer.close()
        return
    lines = head.decode("latin-1").split("\r\n")
    method, target, version = lines[0].split(" ", 2)
    fields = [line.split(":", 1) for line in lines[1:] if ":" in line]
    authorization = next((value.strip() for name, value in fields if name.lower() == "proxy-authorization"), None)
    if CREDENTIALS is not None:
        expected = "Basic " + base64.b64encode(CREDENTIALS.encode()).decode()
        if authorization != expected:
            log(f"407 {method} {target}")
            client_writer.write(b"HTTP/1.1 407 Proxy Authentication Required\r\n"
                                b"Proxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            await client_writer.drain()
            client_writer.close()
            return
    log(f"{method} {target}")
    if method == "CONNECT":
        host, port = target.rsplit(":", 1)
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
        client_writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        await client_writer.drain()
    else:
        rest = target.split("://", 1)[1]
        authority, _, path = rest.partition("/")
        host, _, port = authority.partition(":")
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port or 80))
        kept = [f"{name}:{value}" for name, value in fields if name.lower() not in ("proxy-authorization", "proxy-connection")]
        upstream_writer.write((f"{method} /{path} {version}\r\n" + "".join(line + "\r\n" for line in kept) + "\r\n").encode("latin-1"))
    await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))


async def main():
    server = await asyncio.start_server(serve, "127.0.0.1", PORT)
    async with server:
        await server.serve_forever()


asyncio.run(main())
