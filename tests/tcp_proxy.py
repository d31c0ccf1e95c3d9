"""A TCP proxy that can die mid-transfer: the front of an S3 server, for tests (standard library
only; run as a script).

    python tests/tcp_proxy.py LISTEN_PORT TARGET_PORT [--die-after BYTES] [--lifetime S]

It forwards 127.0.0.1:LISTEN_PORT to 127.0.0.1:TARGET_PORT, prints ``ready`` once it listens,
and with ``--die-after`` SIGKILLs itself once that many bytes have gone from clients to the
server: the kernel then resets its connections and refuses new ones, as for a server process
killed mid-upload. What sits behind it (moto, in the test's process) keeps its state, so a
proxy started again on the same port is the same store "restarted", and the test can look at
what the dead one left behind. It prints ``dying after N bytes`` just before it dies, and
exits by itself after ``--lifetime`` seconds (default 120) if nobody stops it.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import threading

_lock = threading.Lock()
_forwarded = 0


def _pump(src: socket.socket, dst: socket.socket, upload: bool, die_after: int | None) -> None:
    global _forwarded
    try:
        while chunk := src.recv(65536):
            if upload and die_after is not None:
                with _lock:
                    _forwarded += len(chunk)
                    if _forwarded >= die_after:
                        print(f"dying after {_forwarded} bytes", flush=True)
                        os.kill(os.getpid(), signal.SIGKILL)
            dst.sendall(chunk)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _serve(client: socket.socket, target: int, die_after: int | None) -> None:
    try:
        upstream = socket.create_connection(("127.0.0.1", target))
    except OSError:
        client.close()
        return
    threading.Thread(target=_pump, args=(upstream, client, False, None), daemon=True).start()
    _pump(client, upstream, True, die_after)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("listen", type=int)
    parser.add_argument("target", type=int)
    parser.add_argument("--die-after", type=int, default=None)
    parser.add_argument("--lifetime", type=float, default=120.0)
    args = parser.parse_args(argv)
    threading.Timer(args.lifetime, os._exit, (0,)).start()  # never outlives a lost test
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.listen))
    server.listen(64)
    print("ready", flush=True)
    while True:
        client, _ = server.accept()
        threading.Thread(
            target=_serve, args=(client, args.target, args.die_after), daemon=True
        ).start()


if __name__ == "__main__":
    main(sys.argv[1:])
