"""Readers for other tools' logs: each maps one harness's results onto the long row format."""
