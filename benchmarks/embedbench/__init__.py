"""Parts of benchmarks/embed_bench.py."""
