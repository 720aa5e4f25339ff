"""Moving a whole Pack: export to Parquet or JSONL, import back (``pack_io``), in the
file formats of ``formats``."""
