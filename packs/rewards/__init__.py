"""Rewards: sources turned into values, per-Pack wiring, the EMA math, replay of the
reward log, intrinsic reward and the service that applies them to a Pack."""
