"""Self-tuning: a Pack fits its learning to its own logged episodes (docs/tuning.md).

The tuner reads the Pack's episodes, their candidate pools and rewards
(:mod:`packs.tuning.logs`), estimates what the evidence supports (how consistent the
rewards are, how close the Pack's distinct questions come to each other), replays each
candidate setting on questions held out from the fit (:mod:`packs.tuning.replay`), and
adopts a change only when a paired bootstrap bound says it beats the settings in force
(:mod:`packs.tuning.gate`). Every run is recorded (:mod:`packs.tuning.service`).
"""
