"""Recall: Phase A (cosine and BM25 candidates), Phase B (re-ranking), the in-memory
vector cache, adjacency links and the prompt block. Learned state is read through
``packs.learning``."""
