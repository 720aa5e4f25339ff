"""Import this first in a subprocess to run Wolfie as a core install would: every module
an extra brings (``packs.extras.EXTRAS``) fails to import, as if it were not installed.

``python -c "import tests.support.no_extras; from wolfie.cli import main; main()" ARGS``
"""

from __future__ import annotations

import importlib.abc
import sys

from packs.extras import EXTRAS

BLOCKED = {module for modules in EXTRAS.values() for module in modules}


class _NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
