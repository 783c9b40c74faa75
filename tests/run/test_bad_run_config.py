"""Bad numbers in a run config are bad input: exit 2, one line naming file, line, key, value."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult, one_line_error

HEAD = 'cases = "cases.csv"\nstore = "runs.duckdb"\n'
PROVIDER = '[providers.p]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
ARM = '[arms.a]\nprovider = "p"\nmodel = "m"\n'

# (config text, its line of the bad key, the key, the value as the message shows it)
P, T = HEAD + PROVIDER, "max_concurrency = 1000000000\n"
BAD = [
    (HEAD + PROVIDER + "timeout = nan\n" + ARM, 6, "providers.p.timeout", "nan"),
    (HEAD + PROVIDER + "timeout = inf\n" + ARM, 6, "providers.p.timeout", "inf"),
    (HEAD + PROVIDER + "timeout = -1\n" + ARM, 6, "providers.p.timeout", "-1"),
    (HEAD + PROVIDER + "timeout = 0\n" + ARM, 6, "providers.p.timeout", "0"),
    (P + "requests_per_minute = -inf\n" + ARM, 6, "providers.p.requests_per_minute", "-inf"),
    (P + "tokens_per_minute = nan\n" + ARM, 6, "providers.p.tokens_per_minute", "nan"),
    (HEAD + PROVIDER + "max_retry_after = nan\n" + ARM, 6, "providers.p.max_retry_after", "nan"),
    (HEAD + PROVIDER + "max_retry_after = -5\n" + ARM, 6, "providers.p.max_retry_after", "-5"),
    (P + "retry_budget_seconds = inf\n" + ARM, 6, "providers.p.retry_budget_seconds", "inf"),
    (HEAD + PROVIDER + "max_retries = -1\n" + ARM, 6, "providers.p.max_retries", "-1"),
    (P + T + ARM, 6, "providers.p.max_concurrency", "1000000000"),
    (HEAD + PROVIDER + ARM + "temperature = nan\n", 9, "arms.a.temperature", "nan"),
    (HEAD + PROVIDER + ARM + "temperature = inf\n", 9, "arms.a.temperature", "inf"),
    (HEAD + PROVIDER + ARM + "temperature = -0.5\n", 9, "arms.a.temperature", "-0.5"),
    (HEAD + PROVIDER + ARM + "top_p = nan\n", 9, "arms.a.top_p", "nan"),
    (HEAD + PROVIDER + ARM + "max_tokens = -3\n", 9, "arms.a.max_tokens", "-3"),
    ("max_cost = nan\n" + HEAD + PROVIDER + ARM, 1, "max_cost", "nan"),
    ("max_cost = -10\n" + HEAD + PROVIDER + ARM, 1, "max_cost", "-10"),
    ("max_wall_seconds = -inf\n" + HEAD + PROVIDER + ARM, 1, "max_wall_seconds", "-inf"),
    ("max_wall_seconds = 0\n" + HEAD + PROVIDER + ARM, 1, "max_wall_seconds", "0"),
    ("stop_after_identical_errors = -1\n" + P + ARM, 1, "stop_after_identical_errors", "-1"),
    ("repeats = 0\n" + HEAD + PROVIDER + ARM, 1, "repeats", "0"),
    (P + ARM + '[score]\nregex = "x"\nthreshold = nan\n', 11, "score.threshold", "nan"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "line", "key", "value"), BAD, ids=[f"{b[2]}={b[3]}" for b in BAD])
def test_a_bad_number_in_a_run_config_is_one_line_exit_2(
    write: Callable[[str, str], Path],
    run_cli: Callable[..., CliResult],
    text: str,
    line: int,
    key: str,
    value: str,
) -> None:
    write("cases.csv", "case_id,prompt\n1,hi\n")
    config = write("run.toml", text)
    result = run_cli("run", "--config", str(config), "--no-progress")
    one_line_error(result, f"{config}, line {line}, field {key!r}, value {value}")


@pytest.mark.parametrize("value", ["nan", "inf", "-1"])
def test_a_bad_max_cost_flag_is_one_line_exit_2(
    write: Callable[[str, str], Path], run_cli: Callable[..., CliResult], value: str
) -> None:
    cases = write("cases.csv", "case_id,prompt\n1,hi\n")
    result = run_cli("run", str(cases), "--arm", "a=openai:m", f"--max-cost={value}")
    one_line_error(result, "--max-cost takes a finite number of USD >= 0", value)


@pytest.mark.parametrize(
    ("price", "shown"),
    [("nan", "models.m.input', value nan"), ("inf", "models.m.input', value inf"),
     ("-1.0", "models.m.input', value -1.0"), ("true", "models.m', value")],
)  # fmt: skip
def test_a_bad_price_is_one_line_exit_2(
    write: Callable[[str, str], Path],
    run_cli: Callable[..., CliResult],
    price: str,
    shown: str,
) -> None:
    write("cases.csv", "case_id,prompt\n1,hi\n")
    write("prices.toml", f"[models.m]\ninput = {price}\noutput = 1.0\n")
    config = write("run.toml", 'prices = "prices.toml"\n' + HEAD + PROVIDER + ARM)
    result = run_cli("run", "--config", str(config), "--no-progress")
    one_line_error(result, "prices.toml", shown)
