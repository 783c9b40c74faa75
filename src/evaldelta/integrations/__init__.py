"""Integrations with other tools: the Inspect AI extension (:mod:`.inspect_hook`)."""
