"""The listening socket `bedside serve` hands to uvicorn, bound before the app starts."""

from __future__ import annotations

import socket


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket listening on ``host:port`` (port 0: a free port the system picks, read back with
    ``getsockname``). Bound here rather than by uvicorn so that the address printed is the one served and no
    other process can take a port between its choice and its use.

    Made with ``IPPROTO_TCP`` on purpose: asyncio sets ``TCP_NODELAY`` only on accepted sockets whose protocol is
    TCP, and a socket made with protocol 0 (as :func:`socket.create_server` makes it) leaves Nagle's algorithm on,
    which with the client's delayed ACKs adds tens of milliseconds to every small response.
    Raises :class:`OSError` (a port in use, an address not of this machine)."""
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart may bind while old ones linger
        sock.bind((bare, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock
