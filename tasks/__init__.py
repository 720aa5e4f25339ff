"""Prefect tasks: thin wrappers over library calls in ``packs`` and ``evals``.

Tasks take simple values (Pack name, root, paths), never open handles, so Prefect can
hash their inputs and retry them.
"""

from flows.runtime import configure_offline

configure_offline()
