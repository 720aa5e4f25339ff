"""Learning: the one owner of what a Pack has learned.

The EMA math (``ema``), the online fold a flush stores (``online``), the vectorised
replay and the rebuild from the reward log (``replay``, ``rebuild``), the contextual
index of past rewarded queries (``context``), its kernel (``kernel``), associative links
(``links``), the feed that shares other processes' rewards (``feed``), and the one
per-handle object that holds them (``state.LearningState``). It reads and writes through
``packs.store`` and knows nothing of recall, rewards' sources or the journal.
"""
