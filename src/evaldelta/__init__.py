"""evaldelta: compare LLM releases honestly."""

__version__ = "0.1.0"
