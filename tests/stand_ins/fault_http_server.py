#!/usr/bin/env python3
"""Test stand-in: an HTTP server on 127.0.0.1 serving one file, with faults.

It answers GET for any path with the file (Range and If-Range honoured on its
ETag, unless told otherwise). The fault comes from --mode, or from the first
word of --mode-file when given (re-read at every request, so that a test can
change it between runs); it hits the first --faults requests (0: every one),
later requests are served cleanly:

  ok            no fault
  reset         send --after body bytes, then reset the connection (RST)
  stall         send --after body bytes, then send nothing (at most 600 s)
  wrong-length  announce 1000 bytes more than sent, send the body, close
  503           answer 503 Service Unavailable
  ignore-range  answer 200 with the whole file, whatever the Range
  404           answer 404

Each request appends a line to --log: "<status> <range or -> <body bytes sent>".
The port it listens on is written to --port-file. Ends after --max-seconds.
"""

import argparse
import hashlib
import http.server
import socket
import socketserver
import struct
import threading
import time

import loopback


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--file", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--mode-file")
    parser.add_argument("--faults", type=int, default=1)
    parser.add_argument("--after", type=int, default=100000)
    parser.add_argument("--max-seconds", type=int, default=600)
    args = parser.parse_args()

    with open(args.file, "rb") as f:
        body = f.read()
    etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
    lock = threading.Lock()
    counter = {"requests": 0}

    def mode():
        if args.mode_file:
            try:
                with open(args.mode_file) as f:
                    return (f.read().split() or ["ok"])[0]
            except OSError:
                return "ok"
        return args.mode

    def log(status, range_header, sent):
        with lock, open(args.log, "a") as f:
            f.write(f"{status} {range_header or '-'} {sent}\n")

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def do_GET(self):
            with lock:
                counter["requests"] += 1
                number = counter["requests"]
            current = mode()
            faulty = current != "ok" and (args.faults == 0 or number <= args.faults)
            range_header = self.headers.get("Range")
            if faulty and current in ("503", "404"):
                code = int(current)
                log(code, range_header, 0)  # before the answer: a client may act on it at once
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start, end = 0, len(body)
            status = 200
            if range_header and not (faulty and current == "ignore-range"):
                if_range = self.headers.get("If-Range")
                if if_range is None or if_range == etag:
                    spec = range_header.split("=", 1)[1]
                    first, _, last = spec.partition("-")
                    start = int(first)
                    end = int(last) + 1 if last else len(body)
                    end = min(end, len(body))
                    if start >= len(body):
                        self.send_response(416)
                        self.send_header("Content-Range", f"bytes */{len(body)}")
                        self.send_header("Content-Length", "0")
                        self.end_headers()
                        log(416, range_header, 0)
                        return
                    status = 206
            data = body[start:end]
            announced = len(data) + (1000 if faulty and current == "wrong-length" else 0)
            self.send_response(status)
            self.send_header("ETag", etag)
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(announced))
            if status == 206:
                self.send_header("Content-Range", f"bytes {start}-{end - 1}/{len(body)}")
            self.end_headers()
            sent = 0
            try:
                if faulty and current in ("reset", "stall"):
                    part = data[: args.after]
                    self.wfile.write(part)
                    self.wfile.flush()
                    sent = len(part)
                    if current == "reset":
                        self.connection.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        self.connection.close()
                    else:
                        deadline = time.monotonic() + 600
                        self.connection.settimeout(1)
                        while time.monotonic() < deadline:
                            try:
                                if not self.connection.recv(1):
                                    break  # the client gave up
                            except socket.timeout:
                                continue
                            except OSError:
                                break
                    self.close_connection = True
                    return
                for offset in range(0, len(data), 65536):
                    self.wfile.write(data[offset:offset + 65536])
                    sent += len(data[offset:offset + 65536])
                self.wfile.flush()
                if faulty and current == "wrong-length":
                    self.close_connection = True
            except OSError:
                self.close_connection = True
            finally:
                log(status, range_header, sent)

    class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    loopback.announce_port(args.port_file, server.server_address[1])
    threading.Timer(args.max_seconds, server.shutdown).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
