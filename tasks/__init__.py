"""Prefect tasks: thin wrappers over library calls in ``packs`` and ``evals``.

Tasks take simple values (Pack name, root, paths), never open handles, so Prefect can
hash their inputs and retry them. They read no configuration from the environment:
flows, deployments and the CLI do (``flows.runtime``, ``flows.config``) and pass values.
"""
