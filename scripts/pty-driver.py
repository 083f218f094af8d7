#!/usr/bin/env python3
"""Run a program on a new pseudo-terminal and play a script against it.

Used by Tests/VaultCLITests/PTYDriver.swift to answer password prompts the
way a person would, and to check what the person would see.

Input (JSON on stdin):
    {"argv": ["vault", "init"], "timeout": 20,
     "steps": [{"expect": "new password: "}, {"send": "secret\\n"}, {"sleep": 1.5}, ...]}

"expect" waits until the text appears in the terminal output after the
previous match, then records whether the terminal's ECHO flag is on at that
moment; "send" types the text. The child is a session leader with the pty as
its controlling terminal and as stdin, stdout and stderr, like a login shell.

Output (JSON on stdout):
    {"exit": 0 | null, "signal": null | 9, "timed_out": false,
     "failed_step": null | index of the expect that never matched,
     "echo_at_expect": [false, ...], "echo_after": true,
     "transcript": "everything the terminal showed"}

The parent keeps the pty's slave side open, so it can read the terminal mode
with tcgetattr at any time, including after the child has exited: that is how
"echo is off at the prompt and back on afterwards" is proved, alongside the
transcript not containing the typed password.
"""
import fcntl
import json
import os
import select
import signal
import sys
import termios
import time


def echo_on(fd):
    return bool(termios.tcgetattr(fd)[3] & termios.ECHO)


def main():
    spec = json.load(sys.stdin)
    argv, steps = spec["argv"], spec.get("steps", [])
    deadline = time.monotonic() + float(spec.get("timeout", 20))

    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(master)
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            if slave > 2:
                os.close(slave)
            os.execvp(argv[0], argv)
        except BaseException as error:  # report, never return into the parent's code
            os.write(2, f"pty-driver: cannot run {argv[0]}: {error}\n".encode())
        os._exit(127)

    transcript = bytearray()
    status = None

    def pump(wait):
        """Reads what the terminal shows within `wait` seconds; True if any."""
        ready, _, _ = select.select([master], [], [], wait)
        if not ready:
            return False
        try:
            data = os.read(master, 65536)
        except OSError:
            return False
        transcript.extend(data)
        return bool(data)

    def exited():
        nonlocal status
        if status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
        return status is not None

    result = {"timed_out": False, "failed_step": None, "echo_at_expect": []}
    cursor = 0
    for index, step in enumerate(steps):
        if "send" in step:
            os.write(master, step["send"].encode())
            continue
        if "sleep" in step:
            # Time for something outside the program to happen (a background
            # edit), with the terminal still read so the program never blocks.
            until = time.monotonic() + step["sleep"]
            while time.monotonic() < until:
                pump(0.05)
            continue
        needle = step["expect"].encode()
        while True:
            found = transcript.find(needle, cursor)
            if found >= 0:
                cursor = found + len(needle)
                result["echo_at_expect"].append(echo_on(slave))
                break
            if time.monotonic() > deadline or (exited() and not pump(0.05)):
                result["failed_step"] = index
                break
            pump(0.05)
        if result["failed_step"] is not None:
            break

    while not exited():
        if time.monotonic() > deadline or result["failed_step"] is not None:
            result["timed_out"] = result["failed_step"] is None
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = None
            break
        pump(0.05)
    while pump(0.05):
        pass

    result["exit"] = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
    result["signal"] = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
    result["echo_after"] = echo_on(slave)
    result["transcript"] = transcript.decode("utf-8", "replace")
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
