#!/usr/bin/env python3
"""Test stand-in: holds a server's answer at a gate the test opens.

A test that stops, kills or races a transfer needs the transfer to be in
flight when it acts, whatever the machine's speed. This stand-in passes the
first --budget bytes of what a real server answers, then holds every further
byte until the test creates GATE_DIR/open. Once a byte is held it writes
GATE_DIR/holding (the bytes passed so far, written whole by a rename): the
event a test waits for. The budget is shared by every connection and every
process that names the same GATE_DIR (GATE_DIR/passed, under flock).

  gate.py relay --gate-dir D --budget N --target-port P --port-file F
      a TCP relay on 127.0.0.1 (its port written to F) in front of
      127.0.0.1:P: the client's bytes pass untouched, the server's through
      the gate. Its upstream socket's receive buffer is small, so that what
      the server counts as sent stays near what passed.
  gate.py pipe --gate-dir D --budget N -- COMMAND...
      runs COMMAND (a CGI program such as git-http-backend) and passes its
      standard output through the gate; its exit status is COMMAND's.

Every wait is bounded by --max-seconds (default 600).
"""

import argparse
import fcntl
import os
import socket
import subprocess
import sys
import threading
import time

import loopback

CHUNK = 16384


class Gate:
    def __init__(self, directory, budget, max_seconds):
        self.directory = directory
        self.budget = budget
        self.deadline = time.monotonic() + max_seconds
        os.makedirs(directory, exist_ok=True)

    def is_open(self):
        return os.path.exists(os.path.join(self.directory, "open"))

    def take(self, wanted):
        """How many of `wanted` bytes may pass now (all once the gate is open)."""
        if self.is_open():
            return wanted
        with open(os.path.join(self.directory, "passed.lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            path = os.path.join(self.directory, "passed")
            try:
                with open(path) as f:
                    passed = int(f.read() or "0")
            except OSError:
                passed = 0
            allowed = max(0, min(wanted, self.budget - passed))
            with open(path, "w") as f:
                f.write(str(passed + allowed))
            if allowed < wanted:
                holding = os.path.join(self.directory, "holding")
                with open(holding + ".tmp", "w") as f:
                    f.write(str(passed + allowed))
                os.rename(holding + ".tmp", holding)
            return allowed

    def wait_open(self, abandoned=lambda: False):
        """True once the test opened the gate; False when the reader left or time ran out."""
        while time.monotonic() < self.deadline:
            if self.is_open():
                return True
            if abandoned():
                return False
            time.sleep(0.01)
        return False


def pass_through(gate, read, write, abandoned=lambda: False):
    """Copies read() chunks to write() through the gate until read() is empty."""
    while True:
        data = read()
        if not data:
            return
        allowed = gate.take(len(data))
        if allowed:
            write(data[:allowed])
        if allowed < len(data):
            if not gate.wait_open(abandoned):
                return
            write(data[allowed:])


def relay(args, gate):
    listener = loopback.listen(args.port_file)

    def serve(client):
        upstream = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        upstream.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        try:
            upstream.connect(("127.0.0.1", args.target_port))
        except OSError:
            client.close()
            return
        closed = threading.Event()

        def client_to_server():
            try:
                while True:
                    data = client.recv(CHUNK)
                    if not data:
                        break
                    upstream.sendall(data)
            except OSError:
                pass
            closed.set()
            try:
                upstream.shutdown(socket.SHUT_WR)
            except OSError:
                pass

        threading.Thread(target=client_to_server, daemon=True).start()
        try:
            pass_through(gate, lambda: upstream.recv(CHUNK), client.sendall, closed.is_set)
        except OSError:
            pass
        for end in (client, upstream):
            try:
                end.close()
            except OSError:
                pass

    listener.settimeout(1)
    while time.monotonic() < gate.deadline:
        try:
            client, _ = listener.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(client,), daemon=True).start()


def pipe(args, gate):
    child = subprocess.Popen(args.command, stdout=subprocess.PIPE)
    out = sys.stdout.buffer

    def write(data):
        out.write(data)
        out.flush()

    try:
        pass_through(gate, lambda: child.stdout.read1(CHUNK), write)
    except (BrokenPipeError, OSError):
        child.kill()
    return child.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["relay", "pipe"])
    parser.add_argument("--gate-dir", required=True)
    parser.add_argument("--budget", type=int, required=True)
    parser.add_argument("--max-seconds", type=int, default=600)
    parser.add_argument("--target-port", type=int)
    parser.add_argument("--port-file")
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:len(argv) - len(command) - (1 if command else 0)])
    args.command = command
    gate = Gate(args.gate_dir, args.budget, args.max_seconds)
    if args.mode == "relay":
        relay(args, gate)
        return 0
    return pipe(args, gate)


if __name__ == "__main__":
    sys.exit(main())
