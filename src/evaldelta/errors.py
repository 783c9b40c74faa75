"""The one exception tree of evaldelta.

::

    EvaldeltaError                 base; never raised itself
     ├── InputError                bad data: a file, line, field and value are named   (exit 2)
     │    ├── UnreadableFileError  missing, empty, truncated or unparseable file
     │    ├── MissingColumnError   a required column is absent
     │    ├── BadValueError        a value that cannot be used (non-numeric score, ...)
     │    ├── DuplicateRowError    the same (arm, case_id, repeat) twice
     │    ├── SliceConflictError   one case in two slices of the same slicing column
     │    ├── MixError             a mix or traffic file with unknown, negative or all-zero weights
     │    ├── PolicyError          a gate policy (TOML) that cannot be used: bad syntax, an unknown
     │    │                        key, a negative margin, a slice or case the data lacks
     │    ├── ChecksFileError      a checks file (YAML) that cannot be used: bad syntax, an unknown
     │    │                        check kind or key, a bad regex, a python check that won't import
     │    ├── ConfigError          a run config (TOML) that cannot be used: file, line, key, value
 │    ├── RegressionSetError   a regression set (TOML) that cannot be used: bad syntax, an
 │    │                        unknown key, an id out of order, a case added twice
     │    └── TemplateError        a prompt template that does not parse or names a missing field
     ├── JudgeError                the judge could not run: no provider, a call that failed for good
     ├── StoreError                the run store cannot be used: another schema version, a lock
     │                             held by another process, an unknown run id
     ├── GateRefusedError          the gate will not decide: the arms differ in pins, or their
     │                             cases in rendered prompt, payload or retrieval, beyond the
     │                             declared arm difference and the policy does not allow it
     └── UsageError                bad options: an unknown arm, a single arm          (exit 2)
          └── ProviderSetupError   a provider that cannot start: unknown kind, a missing API key
                                   variable, a missing optional package

The CLI turns every one of these into a one-line message and exit code 2. Messages are
full sentences that include the values involved.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "BadValueError",
    "ChecksFileError",
    "ConfigError",
    "DuplicateRowError",
    "EvaldeltaError",
    "GateRefusedError",
    "InputError",
    "JudgeError",
    "Location",
    "MissingColumnError",
    "MixError",
    "PolicyError",
    "ProviderSetupError",
    "RegressionSetError",
    "SliceConflictError",
    "StoreError",
    "TemplateError",
    "UnreadableFileError",
    "UsageError",
]


@dataclass(frozen=True)
class Location:
    """Where a bad value was found: a file, and optionally a line (or row), field and value."""

    path: str
    line: int | None = None
    field: str | None = None
    value: object = None
    unit: str = "line"

    def __str__(self) -> str:
        parts = [self.path]
        if self.line is not None:
            parts.append(f"{self.unit} {self.line}")
        if self.field is not None:
            parts.append(f"field {self.field!r}")
        if self.value is not None:
            shown = repr(self.value)
            if len(shown) > 200:  # a value from the data can be megabytes long
                shown = f"{shown[:200]}... ({len(shown):,} characters)"
            parts.append(f"value {shown}")
        return ", ".join(parts)


class EvaldeltaError(Exception):
    """Base of every error evaldelta raises on purpose."""


class InputError(EvaldeltaError):
    """Bad input data. ``location`` names the file, line, field and value when known."""

    def __init__(self, message: str, location: Location | None = None) -> None:
        self.message = message
        self.location = location
        super().__init__(f"{location}: {message}" if location is not None else message)


class UnreadableFileError(InputError):
    """A file that does not exist, is empty, truncated or cannot be parsed."""


class MissingColumnError(InputError):
    """A required column is absent from a file."""


class BadValueError(InputError):
    """A value that cannot be used, such as a non-numeric score."""


class DuplicateRowError(InputError):
    """The same (arm, case_id, repeat) appears more than once."""


class SliceConflictError(InputError):
    """A case appears in two slices of the same slicing column."""


class MixError(InputError):
    """A mix or traffic file that cannot be used as slice weights."""


class PolicyError(InputError):
    """A gate policy that cannot be used; the location names the policy file, line and key."""


class ChecksFileError(InputError):
    """A checks file that cannot be used; the location names the file, line, field and value."""


class JudgeError(EvaldeltaError):
    """The judge could not run: no provider was given, or a call failed and cannot be retried."""


class UsageError(EvaldeltaError):
    """A bad combination of options, such as an unknown baseline arm."""


class ConfigError(InputError):
    """A run config that cannot be used; the location names the file, line and key."""


class RegressionSetError(InputError):
    """A regression set that cannot be used; the location names the file, line and field."""


class TemplateError(InputError):
    """A prompt template that does not parse, or names a field a case lacks."""


class StoreError(EvaldeltaError):
    """The run store cannot be used: a newer schema, a lock held elsewhere, an unknown run."""


class ProviderSetupError(UsageError):
    """A provider that cannot start: unknown kind, missing API key variable or package."""


class GateRefusedError(EvaldeltaError):
    """The gate refuses to decide on arms that differ in an undeclared pin or upstream input."""
