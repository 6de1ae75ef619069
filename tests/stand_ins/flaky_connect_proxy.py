#!/usr/bin/env python3
"""Test stand-in: a CONNECT proxy whose first answers fail, then tunnels.

A corporate proxy under load answers CONNECT with 502, 503 or 504, or drops
the connection, and tunnels the next try. Debian's tinyproxy either tunnels
or refuses, so this stand-in does the rest, on 127.0.0.1: the first
--failures CONNECT requests get --answer (an HTTP status, or "reset": the
connection reset without an answer); every later one is tunnelled to its
target. Nothing but CONNECT is served (405).

Each CONNECT appends a line to --log: "<target> <status or reset>".
The port it listens on is written to --port-file. Ends after --max-seconds.
"""

import argparse
import socket
import struct
import threading
import time

import loopback

REASONS = {502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}


def read_head(client):
    """The request's head (up to the blank line), or None when it never ends."""
    head = b""
    while b"\r\n\r\n" not in head:
        data = client.recv(4096)
        if not data or len(head) > 65536:
            return None
        head += data
    return head


def pipe(source, target):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    try:
        target.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--failures", type=int, required=True)
    parser.add_argument("--answer", required=True)
    parser.add_argument("--max-seconds", type=int, default=600)
    args = parser.parse_args()

    lock = threading.Lock()
    seen = {"connects": 0}

    def log(line):
        with lock, open(args.log, "a") as f:
            f.write(line + "\n")

    def serve(client):
        with client:
            head = read_head(client)
            if head is None:
                return
            words = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            if len(words) != 3 or words[0] != "CONNECT":
                client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
                return
            target = words[1]
            with lock:
                seen["connects"] += 1
                failing = seen["connects"] <= args.failures
            if failing and args.answer == "reset":
                log(target + " reset")
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return
            if failing:
                status = int(args.answer)
                log(target + " " + str(status))
                reason = REASONS.get(status, "Error")
                client.sendall(("HTTP/1.1 %d %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                % (status, reason)).encode())
                return
            host, _, port = target.rpartition(":")
            try:
                upstream = socket.create_connection((host.strip("[]"), int(port)))
            except (OSError, ValueError):
                log(target + " 502")
                client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
                return
            log(target + " 200")
            with upstream:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
                back.start()
                pipe(client, upstream)
                back.join()

    listener = loopback.listen(args.port_file)
    listener.settimeout(1)
    deadline = time.monotonic() + args.max_seconds
    while time.monotonic() < deadline:
        try:
            client, _ = listener.accept()
        except socket.timeout:
            continue
        client.settimeout(None)
        threading.Thread(target=serve, args=(client,), daemon=True).start()


if __name__ == "__main__":
    main()
