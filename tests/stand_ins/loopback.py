"""Shared by the stand-in servers: a socket listening on 127.0.0.1 on a free
port, and the port file a test waits for (written whole: a rename)."""

import os
import socket


def announce_port(port_file, port):
    """Writes `port` into `port_file` once the server listens."""
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.rename(port_file + ".tmp", port_file)


def listen(port_file, backlog=64):
    """A listening socket on 127.0.0.1 and a free port, announced."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(backlog)
    announce_port(port_file, listener.getsockname()[1])
    return listener
