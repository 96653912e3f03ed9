"""memdecay: memory decay inside SQLite, as a loadable extension.

    import sqlite3, memdecay
    conn = sqlite3.connect("memory.db")
    memdecay.load(conn)
    conn.execute("SELECT effective_weight(0.5, 0.005, 500)").fetchone()
"""

import os
import platform
import sqlite3
import sys

__all__ = ["loadable_path", "load", "__version__"]

from ._version import __version__

# SQLite derives the entry point (sqlite3_memdecay_init) from the file name,
# kept in a folder per platform: memdecay/linux-arm64/memdecay.so.
_LIBRARY = {"linux": "memdecay.so", "win32": "memdecay.dll"}
_OS = {"linux": "linux", "win32": "windows"}
_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def _platform():
    """The running platform as the wheel names its folders (linux-arm64)."""
    machine = platform.machine().lower()
    return "%s-%s" % (_OS.get(sys.platform, sys.platform), _ARCH.get(machine, machine))


def loadable_path():
    """The absolute path of the bundled extension for this machine, for conn.load_extension."""
    here = os.path.dirname(os.path.abspath(__file__))
    running = _platform()
    path = os.path.join(here, running, _LIBRARY.get(sys.platform, "memdecay.so"))
    if os.path.isfile(path):
        return path
    carried = sorted(d for d in os.listdir(here)
                     if any(os.path.isfile(os.path.join(here, d, f)) for f in _LIBRARY.values()))
    raise FileNotFoundError(
        "memdecay: no bundled extension for %s (this install carries %s); install the "
        "memdecay wheel built for %s" % (running, ", ".join(carried) or "none", running))


def load(conn):
    """Load memdecay's SQL functions into the sqlite3 connection conn.

    Extension loading is left as it was found. If conn can load extensions
    already (the app switched loading on, or its SQLite allows
    conn.load_extension by default, as Debian's does), nothing is switched;
    otherwise loading (conn.load_extension and the SQL function
    load_extension()) is switched on for the load only and off again after,
    also when the load fails.
    """
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "memdecay.load: this Python's sqlite3 module cannot load extensions "
            "(it was built without loadable extension support, as pyenv and some "
            "distributions build it by default); use a Python built with "
            "--enable-loadable-sqlite-extensions, such as Debian's /usr/bin/python3, "
            "or rebuild it: PYTHON_CONFIGURE_OPTS=--enable-loadable-sqlite-extensions pyenv install VERSION")
    path = loadable_path()
    was_on = _loading_enabled(conn)
    if not was_on:
        conn.enable_load_extension(True)
    try:
        conn.load_extension(path)
    except sqlite3.OperationalError as e:
        raise RuntimeError("memdecay.load: SQLite refused %s: %s" % (path, e)) from e
    finally:
        if not was_on:
            conn.enable_load_extension(False)


def _loading_enabled(conn):
    """Whether conn.load_extension may load an extension now.

    sqlite3 has no getter for it before Python 3.12, so this asks SQLite to
    load a file that does not exist: with loading off, SQLite refuses with
    "not authorized" before it looks for the file; with loading on, the error
    is that there is no such file.
    """
    missing = os.path.join(os.path.dirname(os.path.abspath(__file__)), "no-such-extension")
    try:
        conn.load_extension(missing)
    except sqlite3.OperationalError as e:
        return "not authorized" not in str(e)
    return True
