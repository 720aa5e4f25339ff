"""The ``wolfie`` command line.

Text that comes from a Pack (memories, chunks, prompt blocks, titles, error messages
quoting user input) is printed as Rich ``Text``, never parsed as markup: a stored
``[note | 00:00-00:18]`` prints as written and a stored ``[/red]`` can't crash a command.
"""

from __future__ import annotations

import inspect
import os
import sys
from typing import Annotated

import click
import typer
from rich.console import Console
from rich.text import Text

from flows.runtime import configure_offline
from packs.errors import InvalidInput, PackNotFound, WolfieError
from packs.extras import missing_extra
from wolfie.commands import register_all
from wolfie.commands.options import PackArg, RootArg

configure_offline()

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Wolfie: self-evolving memory.",
    # Plain click help wraps every column at any width; Rich's panels cut option names
    # and long words with "…" at 80 columns.
    rich_markup_mode=None,
)
console = Console()


@app.command(short_help="Build a demo Pack, learn from rewarded episodes, show the change.")
def demo(
    pack: PackArg = "demo",
    root: RootArg = None,
    epochs: Annotated[int, typer.Option(min=1, max=50, help="Passes over the episodes.")] = 3,
    fresh: Annotated[bool, typer.Option(help="Start from an empty Pack.")] = True,
) -> None:
    """Build a Pack from packs/data/demo, recall, learn from rewarded episodes, show the change."""
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")  # keep the output readable
    from wolfie.demo_view import print_demo

    print_demo(console, pack, root, epochs, fresh)


register_all(app)

for _info in app.registered_commands:
    # click cuts a command's help to 45 characters with "..." in `wolfie --help`; an
    # explicit short help is printed whole (and wrapped).
    if _info.short_help is None and _info.callback is not None:
        _info.short_help = (
            (inspect.getdoc(_info.callback) or "").split("\n\n")[0].replace("\n", " ")
        )


# Typer >= 0.20 vendors click (typer._click) with its own exception classes; older Typer
# raises the click package's. Catch both.
_USAGE_ERRORS: tuple[type[Exception], ...] = tuple(
    {
        click.ClickException,
        *(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"),
    }
)
_EXITS = (click.exceptions.Exit, typer.Exit)
_ABORTS = (click.exceptions.Abort, typer.Abort)


def main() -> None:
    """The console entry point: Wolfie's errors print as one clear line, exit status 2."""
    try:
        check_argv(sys.argv[1:])
        # Outside standalone mode a command's `raise typer.Exit(n)` comes back as the
        # return value n, not as an exception: pass it on, or every exit status is 0.
        status = app(standalone_mode=False)
    except _EXITS as exc:
        sys.exit(exc.exit_code)
    except _USAGE_ERRORS as exc:
        exc.show()  # type: ignore[attr-defined]
        sys.exit(exc.exit_code)  # type: ignore[attr-defined]
    except _ABORTS:
        sys.exit(1)
    except ModuleNotFoundError as exc:  # an optional part of the install
        missing = missing_extra(exc, f"wolfie {_command()}")
        if missing is None:
            raise
        _fail(missing)
    except WolfieError as exc:
        _fail(exc)
    sys.exit(status if isinstance(status, int) and not isinstance(status, bool) else 0)


def check_argv(argv: list[str]) -> None:
    """Refuse an argument that is not valid UTF-8 (Python holds its bytes as lone
    surrogates, which no table can store and no terminal can print)."""
    for number, arg in enumerate(argv, 1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInput(
                f"Argument {number} ({arg[:60]!r}) is not valid UTF-8 at character "
                f"{exc.start}; pass UTF-8 text (check the terminal's or file's encoding)."
            ) from None


def _fail(error: WolfieError) -> None:
    text = str(error)
    if (
        isinstance(error, PackNotFound) and error.pack
    ):  # the engine's message names a Python argument
        text = (
            f"No Pack {error.pack!r} under {error.root!r}. Check --pack and --root (or "
            f"WOLFIE_ROOT); `wolfie packs --root {error.root}` lists the Packs there, and "
            f"`wolfie remember` or `wolfie ingest` with --pack {error.pack} creates it."
        )
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # printable, always
    message = Text.assemble(("Error: ", "red"), text)
    Console(stderr=True).print(message, highlight=False, soft_wrap=True)
    sys.exit(2)


def _command() -> str:
    words = [a for a in sys.argv[1:] if not a.startswith("-")]
    return words[0] if words else ""


if __name__ == "__main__":
    main()
