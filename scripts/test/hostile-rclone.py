#!/usr/bin/env python3
"""A hostile remote for the tests (Tests/VaultCLITests/HostileRemoteTests.swift):
runs the real rclone, but lies the way a remote the attacker controls can.
vault finds it through VAULT_RCLONE. HOSTILE is a comma-separated list of:

  prefix=N      a short read (`cat --count 32` or less) of the manifest
                answers generation N
  old=DIR       every download (`copy`) and every whole read (`cat` of more
                than 32 bytes) is served from DIR, an older copy of the
                remote, while listings and short reads see the real one:
                an object swapped between two reads
  truncate      every file a download writes is cut to half its size
  fail-midway   a download copies half its files, then fails
  biglist=N     a listing answers N made-up entries (no real ones)
  serve-old=DIR `serve http` (a thin vault's range reads) serves DIR, an
                older copy, while listings see the real one
  serve-lie=K   `serve http` is this script's own server over the target
                directory, answering ranges wrongly: K is flip (one byte of
                every answer flipped), shift (the bytes one further on than
                Content-Range says), short (the body cut before its end) or
                stream (one byte flipped where the range is open-ended,
                "bytes=N-": a whole blob's read, and only there)

Anything else runs the real rclone unchanged."""
import os
import subprocess
import sys

REAL = os.environ.get("HOSTILE_REAL_RCLONE", "rclone")


def modes():
    out = {}
    for part in filter(None, os.environ.get("HOSTILE", "").split(",")):
        k, _, v = part.partition("=")
        out[k] = v
    return out


def command(args):
    """The rclone subcommand and its position, past vault's leading flags."""
    for i, a in enumerate(args):
        if a in ("cat", "lsjson", "copy", "copyto", "moveto", "delete", "serve"):
            return a, i
    return None, -1


def redirect(path, target_root, old):
    return old + path[len(target_root):] if path.startswith(target_root) else path


def lying_server(root, kind, args):
    """Listens on 127.0.0.1 (the port vault reads from /proc, as rclone's),
    checks vault's basic authentication, and answers Range requests for the
    files under root wrongly, as `kind` says."""
    import base64
    import http.server
    expected = "Basic " + base64.b64encode(
        (os.environ["RCLONE_USER"] + ":" + os.environ["RCLONE_PASS"]).encode()).decode()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def do_GET(self):
            if self.headers.get("Authorization") != expected:
                self.send_response(401); self.send_header("Content-Length", "0"); self.end_headers(); return
            path = os.path.join(root, self.path.lstrip("/"))
            if not os.path.isfile(path):
                self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
            data = open(path, "rb").read()
            spec = self.headers.get("Range", "bytes=0-").split("=", 1)[1]
            a, _, b = spec.partition("-")
            if a == "":
                first, last = max(0, len(data) - int(b)), len(data) - 1
            else:
                first, last = int(a), min(int(b) if b else len(data) - 1, len(data) - 1)
            body = bytearray(data[first:last + 1])
            if (kind == "flip" or (kind == "stream" and b == "")) and body:
                body[len(body) // 2] ^= 1
            if kind == "shift":
                body = bytearray(data[first + 1:last + 2]).ljust(len(body), b"\0")
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, len(data)))
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(bytes(body[: len(body) // 2]) if kind == "short" else bytes(body))
            if kind == "short":
                self.close_connection = True

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.serve_forever()


def main():
    args = sys.argv[1:]
    m = modes()
    cmd, i = command(args)
    root = os.environ.get("HOSTILE_TARGET", "")
    if cmd == "serve" and "serve-lie" in m:
        return lying_server(root, m["serve-lie"], args)
    if cmd == "serve" and "serve-old" in m:
        args[i + 2] = redirect(args[i + 2], root, m["serve-old"])
        # exec, not a child: vault finds the port among this process's sockets.
        os.execvp(REAL, [REAL] + args)
    if cmd == "lsjson" and "biglist" in m:
        n = int(m["biglist"])
        sys.stdout.write("[\n")
        for k in range(n):
            sys.stdout.write('{"Path":"junk/%08d","Name":"%08d","Size":1,"IsDir":false}%s\n' % (k, k, "," if k + 1 < n else ""))
        sys.stdout.write("]\n")
        return 0
    if cmd == "cat":
        count = int(args[args.index("--count") + 1]) if "--count" in args else -1
        path = args[-1]
        short = 0 <= count <= 32
        if "old" in m and not short:
            args[-1] = redirect(path, root, m["old"])
        if "prefix" in m and short and path.endswith("/manifest"):
            real = subprocess.run([REAL] + args, stdout=subprocess.PIPE)
            data = bytearray(real.stdout)
            if len(data) >= 20:
                data[12:20] = int(m["prefix"]).to_bytes(8, "big")
            sys.stdout.buffer.write(bytes(data))
            return real.returncode
    if cmd == "copy":
        src, dst = args[i + 1], args[i + 2]
        downloading = src.startswith(root) and root != ""
        if downloading and "old" in m:
            args[i + 1] = redirect(src, root, m["old"])
        if downloading and ("truncate" in m or "fail-midway" in m):
            listed = args[args.index("--files-from") + 1]
            files = [l for l in open(listed).read().split("\n") if l]
            if "fail-midway" in m:
                half = files[: len(files) // 2]
                with open(listed, "w") as f:
                    f.write("".join(x + "\n" for x in half))
                subprocess.run([REAL] + args)
                sys.stderr.write("ERROR : connection reset by peer\n")
                return 1
            rc = subprocess.run([REAL] + args).returncode
            for name in files:
                p = os.path.join(dst, name)
                if os.path.isfile(p):
                    os.truncate(p, os.path.getsize(p) // 2)
            return rc
    return subprocess.run([REAL] + args).returncode


if __name__ == "__main__":
    sys.exit(main())
