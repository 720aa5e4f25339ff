"""storage_step's classification of storage failures: transient, permanent, or neither."""

from __future__ import annotations

import pytest

from packs.errors import StorageError, TransientStorageError
from packs.store.faults import storage_step
from packs.store.locations import PackLocation

WHERE = PackLocation(name="p", root="s3://bucket/prefix", storage_options={})
# A real message from a run where a 503 was taken for a 403 ("1.169403ms").
SLOW_DOWN = (
    "LanceError(IO): single PUT of p/reward_events.lance/data/0101.lance failed after "
    "646.412937ms: Error performing PUT http://127.0.0.1:43281/b/p in 1.169403ms - Server "
    "returned non-2xx status code: 503 Service Unavailable: <Code>SlowDown</Code>"
)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (SLOW_DOWN, TransientStorageError),
        ("Server returned non-2xx status code: 500 Internal Server Error", TransientStorageError),
        ("request took 0.503 s then: connection refused", TransientStorageError),
        ("Server returned non-2xx status code: 403 Forbidden", StorageError),
        ("<Code>AccessDenied</Code>", StorageError),
        ("upload took 12.403ms and returned 503", TransientStorageError),
        # CI: a file removed by another process's cleanup, named in hex with "403" in it
        (
            "lance error: Not found: race/reward_events.lance/data/1f4ad306636e403c.lance",
            TransientStorageError,
        ),
        ("Server returned non-2xx status code: 503 for data/e403c.lance", TransientStorageError),
    ],
)
def test_status_codes_match_as_whole_numbers(message, expected):
    with pytest.raises(expected) as raised, storage_step(WHERE, "append to 't'"):
        raise OSError(message)
    assert type(raised.value) is expected
    assert "Pack 'p'" in str(raised.value) and "append to 't'" in str(raised.value)


def test_a_number_that_merely_contains_a_status_code_is_not_one():
    with pytest.raises(ValueError), storage_step(WHERE, "read"):
        raise ValueError("took 1.169403 ms, 4503 rows")
