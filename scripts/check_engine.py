"""Drive the Pack API end to end on a local root and on S3, and print PASS/FAIL per check.

How to run, from the repository root with the project's virtualenv active::

    python scripts/check_engine.py                  # local, then S3 (options), then S3 (env)
    python scripts/check_engine.py --target local   # one target only (repeatable)

The S3 targets run against a moto server this script starts on 127.0.0.1, reached once
through explicit ``storage_options`` and once through the ``AWS_*`` variables. Every
check uses a fresh Pack and the real offline embedder. The checks themselves live in
``tests/support/engine_checks.py``, shared with ``tests/packs/store/test_engine_s3.py``.
Exit status: 0 when every check passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("DO_NOT_TRACK", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root, for tests.*

from tests.support.engine_checks import CHECKS, CheckFailed, PackTarget
from tests.support.s3 import moto_s3

TARGETS = ("local", "s3-options", "s3-env")


@contextlib.contextmanager
def targets(names: list[str]) -> Iterator[list[PackTarget]]:
    """The requested targets, with a temp folder and a moto server behind them."""
    with (
        tempfile.TemporaryDirectory(prefix="wolfie-check-") as folder,
        contextlib.ExitStack() as stack,
    ):
        chosen = []
        if "local" in names:
            chosen.append(PackTarget("local", folder))
        if {"s3-options", "s3-env"} & set(names):
            s3 = stack.enter_context(moto_s3())
            if "s3-options" in names:
                root = s3.fresh_root("options")
                chosen.append(PackTarget("s3-options", root, storage_options=s3.storage_options))
            if "s3-env" in names:
                chosen.append(PackTarget("s3-env", s3.fresh_root("env"), env=s3.env))
        yield chosen


def run_check(target: PackTarget, name: str) -> bool:
    started = time.perf_counter()
    try:
        detail = CHECKS[name](target)
    except CheckFailed as exc:
        outcome, detail = "FAIL", str(exc)
    except Exception as exc:  # noqa: BLE001 - CLI boundary: report it and run the rest
        outcome, detail = "FAIL", f"{type(exc).__name__}: {exc}"
        traceback.print_exc(file=sys.stderr)
    else:
        outcome = "PASS"
    elapsed = time.perf_counter() - started
    print(f"{outcome}  {target.label:<10}  {name:<16}  {elapsed:5.1f}s  {detail}", flush=True)
    return outcome == "PASS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--target", action="append", choices=TARGETS, help="run only this target (repeatable)"
    )
    args = parser.parse_args(argv)
    names = args.target or list(TARGETS)
    started = time.perf_counter()
    failures = 0
    with targets(names) as chosen:
        for target in chosen:
            print(f"# {target.label}: {target.root}", flush=True)
            failures += sum(not run_check(target, name) for name in CHECKS)
    total = len(chosen) * len(CHECKS)
    elapsed = time.perf_counter() - started
    print(f"{total - failures}/{total} checks passed in {elapsed:.1f}s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
