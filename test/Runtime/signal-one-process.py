#!/usr/bin/env python3
"""Sends a signal to one MPI process of a running ftpipe-run and measures
how long every other process takes to exit.

signal-one-process.py --signal KILL|STOP|TERM --device D --wait-for REGEX
                      --limit SECONDS -- ftpipe-run --np P ...

Starts the command, waits until a line of its output matches REGEX, finds
the MPI processes among its descendants (by OMPI_COMM_WORLD_RANK), sends the
signal to device D, then polls every 10 ms until each other process has
exited (gone or a zombie), and the launcher too. Prints, for FileCheck, one
line per survivor ("device 1 exited within the limit" or "... after X s,
past the limit"), the launcher's exit status, the survivors' measured exit
times, and the runtime's failure messages. Anything still running after
LIMIT + 30 s is killed and reported as a hang.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import threading
import time


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            pass
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        for child in children.get(pid, []):
            found.append(child)
            todo.append(child)
    return found


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for item in f.read().split(b"\0"):
                if item.startswith(b"OMPI_COMM_WORLD_RANK="):
                    return int(item.split(b"=", 1)[1])
    except OSError:
        pass
    return None


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--signal", choices=["KILL", "STOP", "TERM"], required=True)
    parser.add_argument("--device", type=int, required=True)
    parser.add_argument("--wait-for", required=True)
    parser.add_argument("--limit", type=float, required=True)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command

    launcher = subprocess.Popen(command, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
    lines, seen = [], threading.Event()
    pattern = re.compile(args.wait_for)

    def read(stream):
        for line in stream:
            lines.append(line.rstrip("\n"))
            if pattern.search(line):
                seen.set()

    readers = [threading.Thread(target=read, args=(s,), daemon=True)
               for s in (launcher.stdout, launcher.stderr)]
    for reader in readers:
        reader.start()

    def give_up(why):
        print(f"HANG: {why}")
        os.killpg(launcher.pid, signal.SIGKILL)
        for pid in descendants(launcher.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        print("\n".join(lines[-20:]))
        sys.exit(1)

    if not seen.wait(120):
        give_up(f"no output line matched {args.wait_for!r}")
    ranks = {}
    for pid in descendants(launcher.pid):
        rank = rank_of(pid)
        if rank is not None and running(pid):
            ranks.setdefault(rank, pid)
    if args.device not in ranks:
        give_up(f"no process of device {args.device} among {sorted(ranks)}")

    start = time.monotonic()
    os.kill(ranks[args.device], getattr(signal, "SIG" + args.signal))
    exited = {}
    deadline = start + args.limit + 30
    while time.monotonic() < deadline:
        for rank, pid in ranks.items():
            if rank != args.device and rank not in exited and not running(pid):
                exited[rank] = time.monotonic() - start
        if len(exited) == len(ranks) - 1 and launcher.poll() is not None:
            break
        time.sleep(0.01)
    if launcher.poll() is None:
        give_up("the launcher still runs "
                f"{time.monotonic() - start:.1f} s after the signal")
    target = ranks[args.device]
    if running(target):
        os.kill(target, signal.SIGKILL)
        print(f"device {args.device} was left behind")
    for reader in readers:
        reader.join(5)

    print(f"SIG{args.signal} to device {args.device}")
    for rank in sorted(ranks):
        if rank == args.device:
            continue
        if rank not in exited:
            print(f"device {rank} did not exit")
        elif exited[rank] <= args.limit:
            print(f"device {rank} exited within the limit")
        else:
            print(f"device {rank} exited after {exited[rank]:.2f} s, past "
                  f"the limit of {args.limit} s")
    status = launcher.returncode
    print("launcher exit status " + ("0" if status == 0 else "non-zero"))
    print("measured exit times after the signal: " + ", ".join(
        f"device {rank} {seconds:.3f} s"
        for rank, seconds in sorted(exited.items())))
    for line in sorted(line for line in lines if "ftpipe runtime:" in line):
        print(line)


if __name__ == "__main__":
    main()
