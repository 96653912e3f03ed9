"""memdecay: memory decay inside SQLite, as a loadable extension.

    import sqlite3, memdecay
    conn = sqlite3.connect("memory.db")
    memdecay.load(conn)
    conn.execute("SELECT effective_weight(0.5, 0.005, 500)").fetchone()
"""

import os
import sqlite3

__all__ = ["loadable_path", "load", "__version__"]

from ._version import __version__

# SQLite derives the entry point (sqlite3_memdecay_init) from this file name.
_LIBRARY = "memdecay.so"


def loadable_path():
    """The absolute path of the bundled extension, for conn.load_extension."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), _LIBRARY)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            "memdecay: the bundled extension %s is missing; reinstall the memdecay wheel" % path)
    return path


def load(conn):
    """Load memdecay's SQL functions into the sqlite3 connection conn.

    Extension loading is switched on only for the load and off again after.
    """
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError(
            "memdecay.load: this Python's sqlite3 module cannot load extensions "
            "(it was built without loadable extension support, as pyenv and some "
            "distributions build it by default); use a Python built with "
            "--enable-loadable-sqlite-extensions, such as Debian's /usr/bin/python3, "
            "or rebuild it: PYTHON_CONFIGURE_OPTS=--enable-loadable-sqlite-extensions pyenv install VERSION")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    except sqlite3.OperationalError as e:
        raise RuntimeError("memdecay.load: SQLite refused %s: %s" % (loadable_path(), e)) from e
    finally:
        conn.enable_load_extension(False)
