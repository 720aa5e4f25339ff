"""Recall: Phase A (cosine candidates), Phase B (re-ranking), contextual utility, the
in-memory vector cache, scopes and the prompt block."""
