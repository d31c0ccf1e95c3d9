"""The grader's service: a tiny Python server that validates an INI config and answers on a
unix socket, and the probe that starts it after an episode and asks it one question.

The same server source is placed in the task's system (``srv/app/server.py``) so the agent can
read what it validates; the grader never runs that copy. After the episode, with every process
of the session dead, the probe starts the grader's own copy with the config the agent left
(``etc/app/app.ini``) in a fresh sandbox, connects to the socket the task names, and prints one
JSON line: whether it started, what it
answered to ``PING``, and the last lines of its error output. TCP is refused by the sandbox's
seccomp filter, so the service listens on a unix socket.
"""

from __future__ import annotations

__all__ = ["PROBE_SOURCE", "SERVER_SOURCE", "expected_answer"]

SERVER_SOURCE = r'''"""app server: validates its INI config, then answers PING on a unix socket."""
import configparser, hashlib, os, socket, stat, sys

ALLOWED = {"server": {"name", "socket", "workers"}, "auth": {"token_file"}}


def fail(message):
    sys.stderr.write("config error: %s\n" % message)
    sys.exit(2)


def load(path):
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with open(path) as f:
            parser.read_file(f)
    except (OSError, configparser.Error) as e:
        fail("cannot parse %s: %s" % (path, str(e).splitlines()[0]))
    for section, keys in ALLOWED.items():
        if not parser.has_section(section):
            fail("missing section [%s]" % section)
        for key in parser[section]:
            if key not in keys:
                fail("unknown key %r in [%s]" % (key, section))
        for key in keys:
            if key not in parser[section]:
                fail("missing key %r in [%s]" % (key, section))
    s, a = parser["server"], parser["auth"]
    name = s["name"].strip()
    if not name or not all(c.isalnum() or c == "-" for c in name):
        fail("name must be letters, digits and dashes, got %r" % name)
    try:
        workers = int(s["workers"])
    except ValueError:
        fail("workers must be a whole number, got %r" % s["workers"])
    if not 1 <= workers <= 16:
        fail("workers must be 1..16, got %d" % workers)
    sock = s["socket"].strip()
    if not sock.startswith("/") or not os.path.isdir(os.path.dirname(sock)):
        fail("socket must be an absolute path in an existing directory, got %r" % sock)
    token_file = a["token_file"].strip()
    try:
        st = os.stat(token_file)
        with open(token_file, "rb") as f:
            token = f.read().strip()
    except OSError as e:
        fail("cannot read token_file %r: %s" % (token_file, e.strerror))
    if st.st_mode & (stat.S_IROTH | stat.S_IWOTH):
        fail("token_file %r must not be readable or writable by others" % token_file)
    if not token:
        fail("token_file %r is empty" % token_file)
    return name, workers, sock, hashlib.sha256(token).hexdigest()[:8]


def main():
    if len(sys.argv) != 3 or sys.argv[1] != "--config":
        fail("usage: server.py --config PATH")
    name, workers, path, token = load(sys.argv[2])
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(8)
    sys.stderr.write("listening on %s\n" % path)
    sys.stderr.flush()
    while True:
        conn, _ = server.accept()
        with conn:
            if conn.recv(64).strip() == b"PING":
                conn.sendall(("PONG %s workers=%d token=%s\n" % (name, workers, token)).encode())


if __name__ == "__main__":
    main()
'''

PROBE_SOURCE = r'''"""grader probe: start the grader's server with a config, PING it, print JSON."""
import configparser, json, os, socket, subprocess, sys, time

server, config = sys.argv[1], sys.argv[2]
out = {"started": False, "answer": "", "log": ""}
parser = configparser.ConfigParser(interpolation=None)
try:
    parser.read(config)
    path = parser["server"]["socket"].strip()
except Exception:
    path = ""
if len(sys.argv) > 3:  # the socket the task asks for, whatever the config says
    path = sys.argv[3]
proc = subprocess.Popen([sys.executable, "-I", server, "--config", config],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
deadline = time.monotonic() + 5
answer = b""
while time.monotonic() < deadline and proc.poll() is None:
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
            c.settimeout(2)
            c.connect(path)
            c.sendall(b"PING\n")
            answer = c.recv(256)
            out["started"] = True
            break
    except OSError:
        time.sleep(0.05)
proc.kill()
out["answer"] = answer.decode(errors="replace").strip()
out["log"] = proc.stderr.read().decode(errors="replace")[-500:]
print(json.dumps(out))
'''


def expected_answer(name: str, workers: int, token: str) -> str:
    """What the service answers to PING when it runs with the intended config.

    >>> expected_answer("billing", 4, "s3cret")
    'PONG billing workers=4 token=1ec1c26b'
    """
    import hashlib

    return f"PONG {name} workers={workers} token={hashlib.sha256(token.encode()).hexdigest()[:8]}"
