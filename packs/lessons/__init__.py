"""Lessons: writers that distil a memory into a lesson, the refresh that runs them, and
the versioned prompts (``prompts/``); ``service`` is ``pack.lessons``."""
