"""Parts of ``benchmarks/recall_bench.py``: corpus, timing, the sections and the report."""
