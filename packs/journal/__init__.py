"""The journal: what a handle buffers on the hot path (episodes, retrieval logs, reward
events, validations) and the flush that writes it, logs first, then the learned state
through ``packs.learning``."""
