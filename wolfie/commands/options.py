"""The options every Pack command takes, declared once (typer ``Annotated`` types), and
the one reading of text arguments: ``-`` for standard input, ``@FILE`` for a file."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from packs.errors import InvalidInput

PackArg = Annotated[str, typer.Option("--pack", "-p", help="Pack name.")]
RootArg = Annotated[
    str | None,
    typer.Option("--root", help="Pack root: a folder or s3://bucket/prefix (WOLFIE_ROOT)."),
]
JsonArg = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
ScopeArg = Annotated[
    str | None,
    typer.Option(
        help="A user or session id: the call sees that scope's rows and the shared ones, "
        "and writes into that scope."
    ),
]
KArg = Annotated[int | None, typer.Option(min=1, max=100, help="Items to keep (k2).")]
KeyArg = Annotated[
    str | None,
    typer.Option("--key", help="Idempotency key: a redelivered reward with it applies once."),
]

TEXT_HELP = "- reads standard input, @FILE a UTF-8 file (@@ starts a literal @)"
# The largest max_text_chars a Pack accepts (packs/settings/pack_settings.py): a longer
# file can't be stored by any Pack, so it is refused before it is read whole.
MAX_TEXT_CHARS = 10_000_000


def read_texts(**values: str | None) -> dict[str, str | None]:
    """Each text argument as given, or read: ``-`` from standard input (one argument at
    most), ``@PATH`` from a UTF-8 file, ``@@...`` as a literal text starting with ``@``.
    A trailing line break of what was read is dropped (``echo`` and editors add one)."""
    stdin = [name for name, value in values.items() if value == "-"]
    if len(stdin) > 1:
        raise InvalidInput(f"Only one argument can read standard input ('-'), not {stdin}.")
    return {name: _read(name, value) for name, value in values.items()}


def _read(name: str, value: str | None) -> str | None:
    if value is None:
        return None
    if value == "-":
        return _trimmed(sys.stdin.read(MAX_TEXT_CHARS + 1), name, "standard input")
    if value.startswith("@@"):
        return value[1:]
    if not value.startswith("@"):
        return value
    path = value[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            return _trimmed(handle.read(MAX_TEXT_CHARS + 1), name, path)
    except FileNotFoundError:
        raise InvalidInput(
            f"{name}: no file {path!r} to read (@FILE reads a file; write @@ for a text that "
            "starts with @)."
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{name}: can't read {path!r} as UTF-8 text ({exc}).") from None


def _trimmed(text: str, name: str, where: str) -> str:
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidInput(
            f"{name}: {where} holds more than {MAX_TEXT_CHARS:,} characters, more than any "
            "Pack stores (max_text_chars)."
        )
    return text.removesuffix("\n").removesuffix("\r")
