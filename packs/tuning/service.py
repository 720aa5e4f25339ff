"""Tuning runs of one open Pack: fit, gate, adopt, record, and undo (docs/tuning.md).

``tune`` reads the log (:mod:`packs.tuning.logs`), fits (:mod:`packs.tuning.fit`), and on
adoption stores the fitted values as the next settings version through the Pack's own
``configure``. Every run, adopted or not, dry or not, is one row of the ``tuning`` table
(numbers and settings only). ``rollback`` stores the values a past run replaced.

Automatic runs (``settings.tuning.auto``) come after a reward once the log holds
:data:`FIRST_AUTO` rewarded episodes, then each time it has doubled since the last run.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from packs.errors import InvalidInput, StorageError, TransientStorageError
from packs.events import EngineEvents
from packs.journal.flush import Flusher
from packs.records import TuningReport
from packs.settings import ActiveSettings, PackSettings
from packs.store import schemas
from packs.store.filters import sql_literal
from packs.store.gateway import PackStore
from packs.tuning.fit import Fit, fit
from packs.tuning.logs import read_log

log = logging.getLogger(__name__)
TRIGGERS = ("command", "schedule", "auto")
RUN_ID = re.compile(r"[0-9a-f]{32}")  # uuid4().hex, as tune names its runs
FIRST_AUTO = 64  # hand-set: rewarded episodes before the first automatic run (32 per half)


class TuningService:
    """Tune, list and undo for one handle."""

    def __init__(
        self,
        store: PackStore,
        settings: ActiveSettings,
        dim: int,
        configure: Callable[[Mapping[str, Any]], PackSettings],
        writer: str,
        lock: threading.RLock,
        flusher: Flusher,
        events: EngineEvents,
    ) -> None:
        self._store = store
        self._settings = settings
        self._dim = dim
        self._configure = configure
        self._writer = writer
        self._lock = lock
        self._flusher = flusher
        self._rewarded = 0  # rewarded episodes this handle saw since it opened
        self._next_auto = FIRST_AUTO
        events.reward_landed.connect(self.rewarded)  # an automatic tune when one is due

    def tune(self, *, dry_run: bool = False, trigger: str = "command") -> TuningReport:
        """Fit the Pack's settings to its episodes; adopt what held-out replay shows
        better (unless ``dry_run``); record the run either way."""
        if trigger not in TRIGGERS:
            raise InvalidInput(f"trigger must be one of {TRIGGERS}, not {trigger!r}.")
        if not dry_run:
            self._store.require_writable("tune the Pack's settings")
        if not self._store.read_only:
            self._flusher.flush()  # the log holds every reward this handle buffered
        before = self._settings.version
        in_force = self._settings.value
        found = fit(read_log(self._store, self._dim), in_force, self._dim)
        adopted = found.adopted and not dry_run
        if adopted:
            with self._lock:
                self._configure(found.changes)
        report = _report(found, in_force, trigger, dry_run, adopted, before, self._settings.version)
        if not self._store.read_only:
            row = pa.Table.from_pylist([_row(report, self._writer)], schema=schemas.TUNING_SCHEMA)
            self._store.append(schemas.TUNING, row)
        return report

    def history(self, limit: int = 20) -> list[TuningReport]:
        """The newest ``limit`` tuning runs of the Pack, newest first."""
        if not self._store.has_table(schemas.TUNING):
            return []
        rows = self._store.scan(schemas.TUNING, list(schemas.TUNING_SCHEMA.names)).to_pylist()
        rows.sort(key=lambda r: r["at"], reverse=True)
        return [_from_row(r) for r in rows[:limit]]

    def rollback(self, report_id: str) -> PackSettings:
        """Store again the values that run ``report_id`` replaced."""
        if not isinstance(report_id, str) or not RUN_ID.fullmatch(report_id):
            raise InvalidInput(
                f"A tuning run id is 32 hex digits, not {report_id!r}; "
                "`wolfie tune --history` lists them."
            )
        self._store.require_writable("roll back a tuning run")
        if not self._store.has_table(schemas.TUNING):
            raise InvalidInput(f"No tuning run {report_id!r}; `wolfie tune --history` lists them.")
        found = self._store.get(schemas.TUNING, f"id = {sql_literal(report_id)}")
        if not found:
            raise InvalidInput(f"No tuning run {report_id!r}; `wolfie tune --history` lists them.")
        run = _from_row(found[0])
        if not run.adopted:
            raise InvalidInput(f"Tuning run {report_id!r} adopted nothing; nothing to roll back.")
        with self._lock:
            return self._configure(run.in_force)

    def rewarded(self) -> TuningReport | None:
        """Count a reward; run an automatic tune when one is due. A storage fault in an
        automatic tune is logged, not raised: the reward it followed is already kept."""
        self._rewarded += 1
        if self._rewarded < self._next_auto or not self._settings.value.tuning.auto:
            return None
        self._next_auto = 2 * self._rewarded
        try:
            return self.tune(trigger="auto")
        except (StorageError, TransientStorageError):
            log.warning(
                "An automatic tune of Pack %r failed; it runs again later.",
                self._store.location.name,
                exc_info=True,
            )
            return None


def _report(
    found: Fit,
    in_force: PackSettings,
    trigger: str,
    dry_run: bool,
    adopted: bool,
    before: int,
    after: int,
) -> TuningReport:
    current = in_force.to_dict()
    return TuningReport(
        id=uuid.uuid4().hex,
        at=datetime.now(UTC),
        trigger=trigger,
        dry_run=dry_run,
        adopted=adopted,
        reason=found.reason if not (dry_run and found.adopted) else f"dry run: {found.reason}",
        changes=dict(found.changes),
        in_force={k: _dotted(current, k) for k in found.changes},
        evidence=dict(found.evidence),
        comparison={
            n: {"changes": d.changes, **d.comparison.as_dict()} for n, d in found.decisions.items()
        }
        or None,
        proposals={n: dict(d.proposals) for n, d in found.decisions.items()},
        settings_before=before,
        settings_after=after,
    )


def _dotted(settings: Mapping[str, Any], key: str) -> Any:
    group, _, name = key.partition(".")
    return settings[group][name] if name else settings[group]


def _row(report: TuningReport, writer: str) -> dict[str, Any]:
    d = report.to_dict()
    return {
        "id": report.id,
        "at": report.at,
        "writer": writer,
        "trigger": report.trigger,
        "dry_run": report.dry_run,
        "adopted": report.adopted,
        "reason": report.reason,
        "in_force_json": json.dumps(d["in_force"]),
        "fitted_json": json.dumps({"changes": d["changes"], "proposals": d["proposals"]}),
        "evidence_json": json.dumps(d["evidence"]),
        "estimate_json": json.dumps(d["comparison"]),
        "settings_before": report.settings_before,
        "settings_after": report.settings_after,
    }


def _from_row(row: Mapping[str, Any]) -> TuningReport:
    fitted = json.loads(row["fitted_json"])
    return TuningReport(
        id=row["id"],
        at=row["at"],
        trigger=row["trigger"],
        dry_run=row["dry_run"],
        adopted=row["adopted"],
        reason=row["reason"],
        changes=dict(fitted.get("changes", {})),
        in_force=dict(json.loads(row["in_force_json"])),
        evidence=dict(json.loads(row["evidence_json"])),
        comparison=json.loads(row["estimate_json"]),
        proposals=dict(fitted.get("proposals", {})),
        settings_before=int(row["settings_before"]),
        settings_after=int(row["settings_after"]),
    )
