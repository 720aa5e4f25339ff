"""What every settings group shares: typed pydantic models with unknown keys refused, no
coercion (``"0.3"`` is not a number, ``True`` is not an int), no NaN or infinity, frozen,
and every refusal raised as :class:`~packs.errors.InvalidSettings` naming the setting."""

from __future__ import annotations

from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from packs.errors import InvalidSettings


def describe(exc: ValidationError, where: str) -> str:
    """One line per refused value: ``ranking.k1: Input should be ... (got 0)``."""
    lines = []
    for error in exc.errors():
        path = ".".join(str(part) for part in (where, *error["loc"]) if part != "")
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            lines.append(f"Unknown Pack setting {path!r}.")
        elif not error["loc"]:  # a rule across the group's values
            lines.append(f"{path}: {message}.")
        else:
            lines.append(f"{path}: {message} (got {error.get('input')!r}).")
    return " ".join(lines)


class Group(BaseModel):
    """A group of Pack settings (``settings.ranking``, ``.context``, ``.flush``,
    ``.rewards``)."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", strict=True, allow_inf_nan=False, validate_default=True
    )
    # The group's name in PackSettings, for messages.
    _where: ClassVar[str] = ""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise InvalidSettings(describe(exc, self._where or type(self).__name__)) from None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe values (a strategy as its name)."""
        return self.model_dump(mode="json")

    def replace(self, **changes: Any) -> Self:
        """A copy with ``changes`` (validated like a new group)."""
        return type(self)(**{**self.to_dict(), **changes})
