#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 whose link a test can cut and restore: the network between a replica
and its database or object store failing, while both stay up.

    tcp_cut_proxy.py TARGET_HOST TARGET_PORT     prints its port, then forwards every connection

SIGUSR1 cuts: every open connection is closed and new ones are closed as soon as they are
accepted. SIGUSR2 restores forwarding. Each is acknowledged with a line, "cut" or "restored",
once it took effect. SIGTERM ends it.
"""
import asyncio
import signal
import sys

target_host, target_port = sys.argv[1], int(sys.argv[2])
cut = False
open_links = set()


async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.CancelledError):
        pass
    finally:
        writer.close()


async def accept(client_reader, client_writer):
    if cut:
        client_writer.close()
        return
    try:
        server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
    except OSError:
        client_writer.close()
        return
    link = (client_writer, server_writer)
    open_links.add(link)
    await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))
    open_links.discard(link)


def set_cut(value):
    global cut
    cut = value
    if value:
        for client_writer, server_writer in list(open_links):
            client_writer.transport.abort()
            server_writer.transport.abort()
    print("cut" if value else "restored", flush=True)


async def main():
    # A parent may start us with these signals blocked (it inherits its own mask to children).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2})
    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, set_cut, True)
    loop.add_signal_handler(signal.SIGUSR2, set_cut, False)
    print(server.sockets[0].getsockname()[1], flush=True)
    await asyncio.Event().wait()


asyncio.run(main())
