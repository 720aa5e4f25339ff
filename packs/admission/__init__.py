"""What ``remember`` lets into a Pack, and how: repeat or correction (``compare``, issue
30's part 0)."""
