"""Helpers shared by tests and scripts: a moto S3 endpoint, end-to-end engine checks."""
