"""Print the REST API's OpenAPI schema, as a running ``wolfie api`` serves it at
``/openapi.json``: ``python -m wolfie.api.schema [FILE]``.

``clients/typescript/openapi.json`` is this output; the TypeScript client's types are
generated from it, and ``tests/wolfie/test_api_schema.py`` fails when it is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from wolfie.api.app import openapi_schema


def render() -> str:
    return json.dumps(openapi_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> None:
    text = render()
    if argv:
        Path(argv[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv[1:])
