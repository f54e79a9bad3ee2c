"""Operating-system processes and ports of the test game (Linux ``/proc`` where it helps)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from pathlib import Path

__all__ = [
    "alive",
    "free_port",
    "game_processes",
    "listening",
    "python_path",
    "terminate",
    "text_of",
]

_POLL = 0.1


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def listening(port: int) -> bool:
    """Whether something listens on 127.0.0.1:``port``.

    Binds instead of connecting: a connection would reach the Portal's AMP server as a
    (bogus) client. With SO_REUSEADDR a bind fails only on a listening socket, not on
    connections of an earlier run still in TIME_WAIT.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
        return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (exited, its parent has not collected it yet) is gone as well.
    with contextlib.suppress(OSError, IndexError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    return True


def game_processes(game_dir: Path) -> set[int]:
    """Pids of processes started for the game in ``game_dir`` (their command line names it).

    Catches a Portal or Server that had not yet written its pid file.
    """
    markers = {str(d / "server").encode() for d in (game_dir, game_dir.resolve())}
    pids: set[int] = set()
    for entry in Path("/proc").glob("[0-9]*/cmdline"):  # nothing found off Linux
        with contextlib.suppress(OSError, ValueError):
            command_line = entry.read_bytes()
            if any(m in command_line for m in markers) and int(entry.parent.name) != os.getpid():
                pids.add(int(entry.parent.name))
    return pids


def python_path(current: str, spare: Path) -> str:
    """``PYTHONPATH`` for the launcher, so the game runs the mindspace this process runs.

    The launcher replaces ``sys.path[1]`` (the first ``PYTHONPATH`` entry) with Evennia's
    own root and hands its ``sys.path`` on to the Portal and the Server: a source
    checkout given first would vanish there, and the game would import whichever
    mindspace is installed. So ``spare`` (the game directory, which the launcher puts on
    the path anyway) goes first; giving the checkout twice does not help, as Python drops
    duplicate entries before the launcher runs.
    """
    import sysconfig

    import mindspace

    source = str(Path(mindspace.__file__).resolve().parent.parent)
    installed = {str(Path(sysconfig.get_path(k)).resolve()) for k in ("purelib", "platlib")}
    entries = [e for e in current.split(os.pathsep) if e]
    if source not in installed and source not in entries:
        entries.insert(0, source)
    return os.pathsep.join([str(spare), *entries])


def text_of(data: str | bytes | None) -> str:
    if isinstance(data, bytes):
        return data.decode(errors="replace")
    return data or ""


def terminate(pids: set[int], grace: float = 10) -> None:
    """SIGTERM ``pids`` (twistd shuts down cleanly), SIGKILL what is left after ``grace``."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + grace
    while any(alive(pid) for pid in pids) and time.monotonic() < end:
        time.sleep(_POLL)
    for pid in pids:
        if alive(pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
