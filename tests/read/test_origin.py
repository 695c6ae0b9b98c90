"""Where a function's source comes from (a file, `python -c`, Python's prompt) and the check that it is the code
that runs: a module edited after it was imported is refused, naming the file."""

from __future__ import annotations

import importlib
import math
import os
import pty
import select
import subprocess
import sys
import textwrap
import time

import pytest

import chadpy as chad
from chadpy.errors import UnknownFunction
from tests.support.paths import ROOT

_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def home(tmp_path):
    """An environment whose home is empty: the prompt's history file is not the user's."""
    return {**_ENV, "HOME": str(tmp_path), "PYTHON_HISTORY": str(tmp_path / "history")}


def _module(tmp_path, name: str, text: str):
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(tmp_path))


def test_a_module_edited_after_import_is_refused_naming_the_file(tmp_path):
    mod = _module(tmp_path, "edited_after_import", "def f(x):\n    return x * x\n\ng = lambda x: x * x\n")
    (tmp_path / "edited_after_import.py").write_text("def f(x):\n    return x * x * x\n\ng = lambda x: x * x * x\n")
    os.utime(tmp_path / "edited_after_import.py", (1, 1))  # another mtime, whatever the clock's resolution
    assert mod.f(2.0) == 4.0  # what runs is still x * x
    for fn in (mod.f, mod.g):
        with pytest.raises(UnknownFunction, match="not the code that runs|changed after") as e:
            chad.grad(fn)(2.0)
        assert "edited_after_import.py" in str(e.value)
    sys.path.insert(0, str(tmp_path))
    try:
        importlib.reload(mod)
    finally:
        sys.path.remove(str(tmp_path))
    assert chad.grad(mod.f)(2.0) == 12.0 == chad.grad(mod.g)(2.0)  # the text that runs now


def test_a_line_moved_by_an_edit_above_is_refused(tmp_path):
    mod = _module(tmp_path, "moved_by_an_edit", "def f(x):\n    return x * x\n")
    (tmp_path / "moved_by_an_edit.py").write_text("# a new first line\ndef f(x):\n    return x * x\n")
    os.utime(tmp_path / "moved_by_an_edit.py", (1, 1))
    with pytest.raises(UnknownFunction, match="moved_by_an_edit.py"):
        chad.grad(mod.f)(2.0)


def test_the_check_accepts_what_compiles_alike(tmp_path):
    """Methods (name mangling, `super()`), closures, method calls on imported modules, future imports."""
    mod = _module(
        tmp_path,
        "compiles_alike",
        """
        from __future__ import annotations
        import math
        import numpy as np
        m = math

        class Base:
            def scale(self, x: float) -> float:
                return 2.0 * x

        class Model(Base):
            __k = 3.0

            def loss(self, x: float) -> float:
                return super().scale(x) * self.__k + math.sin(x) + m.cos(x) + float(np.tanh(x))

        def make(c):
            def inner(x):
                return c * x * x
            return inner
        """,
    )
    x = 0.7
    expected = 6.0 + math.cos(x) - math.sin(x) + (1 - math.tanh(x) ** 2)
    assert chad.grad(mod.Model().loss)(x) == pytest.approx(expected)
    assert chad.grad(mod.make(5.0))(x) == pytest.approx(10.0 * x)


def test_python_dash_c_on_every_version():
    """3.11 and 3.12 keep no copy of the command: chadpy reads it from `sys.orig_argv`. A function of another text
    `exec`uted inside the command is `<string>` too, but not the command's: refused, not misread."""
    command = (
        "import chadpy as chad\n"
        "def f(x):\n"
        "    return x * x * x\n"
        "print(chad.grad(f)(2.0))\n"
        "exec('def g(x):\\n    return x * x')\n"
        "try:\n"
        "    chad.grad(g)(2.0)\n"
        "except chad.ChadError as e:\n"
        "    print(type(e).__name__, str(e).splitlines()[0])\n"
    )
    out = subprocess.run([sys.executable, "-c", command], capture_output=True, text=True, env=_ENV, timeout=120)
    first, second = out.stdout.splitlines()
    assert first == "12.0", out.stderr
    assert second.startswith("UnknownFunction the source of `g`"), second


def _prompt(lines: list[str], env: dict[str, str], timeout: float = 60.0) -> str:
    """What Python's interactive prompt shows for `lines` typed at a terminal (a pseudo-terminal: readline on)."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the interpreter at the prompt
        os.environ.update(env, TERM="dumb")
        os.execv(sys.executable, [sys.executable, "-q", "-i"])
    out = b""

    def read_until(done, seconds):
        nonlocal out
        end = time.monotonic() + seconds
        while time.monotonic() < end and not done(out):
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    return

    read_until(lambda shown: shown.rstrip().endswith(b">>>"), timeout)
    for line in [*lines, "print('END', 'OF', 'INPUT')"]:
        os.write(fd, line.encode() + b"\n")
        read_until(lambda shown: shown.rstrip().endswith((b">>>", b"...")), timeout)
        out += b"\n"
    read_until(lambda shown: b"END OF INPUT\r\n" in shown, timeout)
    os.write(fd, b"exit()\n")
    read_until(lambda shown: False, 1.0)
    os.waitpid(pid, 0)
    return out.decode(errors="replace").replace("\r\n", "\n")


@pytest.mark.slow  # 2 s: an interpreter at a pseudo-terminal (the history path is the same on 3.11 and 3.12)
def test_a_function_typed_at_the_prompt(home):
    import readline  # noqa: F401  (the prompt reads through it on this platform)

    shown = _prompt(
        [
            "import chadpy as chad",
            "def f(x):",
            "    return x * x",
            "",
            "def f(x):",  # defined again: the latest text is the one that runs
            "    y = x * x",
            "    return y * x",
            "",
            "print('grad', chad.grad(f)(2.0))",
            "h = lambda x: x * x",
            "try: chad.grad(h)(2.0)\nexcept chad.ChadError as e: print('refused:', str(e).splitlines()[0])",
            "",
        ],
        home,
    )
    assert "grad 12.0" in shown, shown
    assert "refused:" in shown, shown


@pytest.mark.slow  # 2 s: an interpreter starts
def test_piped_into_the_prompt(home):
    """No terminal, so no line history: Python 3.13 keeps each input's source; before it, the message says how."""
    command = "import chadpy as chad\ndef f(x):\n    return x * x\n\nchad.grad(f)(2.0)\n"
    out = subprocess.run(
        [sys.executable, "-q", "-i"], input=command, capture_output=True, text=True, env=home, timeout=120
    )
    if sys.version_info >= (3, 13):
        assert out.stdout == "4.0\n", out.stderr
    else:
        assert "cannot be read" in out.stderr and "Python 3.13" in out.stderr and "a file" in out.stderr, out.stderr
