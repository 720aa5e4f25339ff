"""Rewards: sources turned into values, the reward ledger, idempotency keys, intrinsic
reward, verdicts (validate, resolve) and the service that applies them to a Pack. The
learning math they drive lives in ``packs.learning``."""
