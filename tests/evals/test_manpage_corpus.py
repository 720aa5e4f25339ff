"""The man-page corpus builder: chunk roles, option terms and answer selectors."""

from __future__ import annotations

import pytest

from evals.manpage_corpus import parse, select
from packs.errors import InvalidInput

PAGE = """\
CP(1)                      User Commands                      CP(1)

NAME
       cp - copy files and directories

SYNOPSIS
       cp [OPTION]... SOURCE DEST

DESCRIPTION
       Copy SOURCE to DEST.

       -b     like --backup but does not accept an argument

       -a
       --archive
              same as -dR --preserve=all

              Keeps everything.

AUTHOR
       Written by Torbjorn Granlund.

SEE ALSO
       Full documentation <https://www.gnu.org/software/coreutils/cp>

GNU coreutils 9.1             September 2022                   CP(1)
"""


def test_parse_cuts_a_page_into_overview_options_text_and_one_footer():
    chunks = parse("cp", PAGE)
    assert [(c.role, c.term) for c in chunks] == [
        ("overview", None),
        ("text", None),
        ("option", "-b"),
        ("option", "-a, --archive"),
        ("footer", None),
    ]
    overview, text, short, archive, footer = chunks
    assert overview.body == "cp - copy files and directories cp [OPTION]... SOURCE DEST"
    assert short.text() == "cp -b\nlike --backup but does not accept an argument"
    assert archive.body == "same as -dR --preserve=all Keeps everything."
    assert footer.section == "AUTHOR, SEE ALSO" and "Full documentation" in footer.body
    assert text.text() == "cp (description): Copy SOURCE to DEST."


def test_select_resolves_flags_roles_and_words():
    rows = [
        {
            "source": "man/cp.1",
            "position": i,
            "text": c.text(),
            "metadata": {
                "command": "cp",
                "section": c.section,
                "role": c.role,
                **({"term": c.term} if c.term else {}),
            },
        }
        for i, c in enumerate(parse("cp", PAGE))
    ]
    assert select(rows, "cp:--archive") == ["man/cp.1#3"] == select(rows, "cp:-a")
    assert select(rows, "cp:#footer") == ["man/cp.1#4"]
    assert select(rows, "cp:~copy source to dest") == ["man/cp.1#1"]
    with pytest.raises(InvalidInput, match="matches no chunk"):
        select(rows, "cp:--parents")
