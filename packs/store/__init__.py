"""Storage: where a Pack lives, its table schemas, the one LanceDB gateway and the
write buffer. Only modules here import ``lancedb``."""
