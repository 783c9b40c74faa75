"""CLI command groups that live outside cli.py; each module has ``register(app)``."""
