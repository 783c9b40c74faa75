"""Small helpers every layer shares, none of which owns a feature or imports a layer.

``_lazy`` (a package's names loaded on first use), ``_progress`` (the terminal spinner),
and the bounded readers: ``_limits`` (the limits every reader of a user's file holds to),
``_json_bounds``, ``_toml`` and ``_yaml`` (JSON, TOML and YAML read within them). They sit
below every package (stats, sources, engine, checks, run, gating, ...), so each may import
them and they import nothing of ours but :mod:`evaldelta.errors`.
"""
