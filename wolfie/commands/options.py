"""The options every Pack command takes, declared once (typer ``Annotated`` types)."""

from __future__ import annotations

from typing import Annotated

import typer

PackArg = Annotated[str, typer.Option("--pack", "-p", help="Pack name.")]
RootArg = Annotated[
    str | None,
    typer.Option("--root", help="Pack root: a folder or s3://bucket/prefix (WOLFIE_ROOT)."),
]
JsonArg = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
