"""Pure statistics for comparing arms on the same cases (stdlib, numpy and scipy only).

Every function validates its arguments first (ValueError naming the bad value), returns a
frozen result dataclass or a float, and reports an undefined statistic as nan together with
a :class:`DegenerateDataWarning`. Differences are always candidate minus baseline.
"""

from typing import TYPE_CHECKING

from evaldelta._lazy import lazy_names

if TYPE_CHECKING:  # the names, for type checkers; at run time each loads on first use
    from evaldelta.stats._cluster import (
        clustered_mean,
        clustered_se,
        clustered_se_from_summary,
    )
    from evaldelta.stats._inference import fail_pvalue, interval_at
    from evaldelta.stats._leakage import Asymmetry, LeakageRule, criterion_asymmetry
    from evaldelta.stats._means import mean_t, t_critical, welch
    from evaldelta.stats._multiple import holm
    from evaldelta.stats._paired import (
        mcnemar_exact,
        paired_means,
        paired_means_from_summary,
        paired_proportions,
    )
    from evaldelta.stats._power import (
        mcnemar_exact_power,
        mde_mcnemar,
        mde_paired_t,
        required_pairs,
        required_pairs_mcnemar,
    )
    from evaldelta.stats._proportions import (
        newcombe_unpaired,
        proportion,
        proportion_of_means,
        wilson_interval,
        z_critical,
    )
    from evaldelta.stats._reducers import Reducer, parse_reducer, reduce_values
    from evaldelta.stats._results import (
        BreakEven,
        ConfidenceInterval,
        DegenerateDataWarning,
        Estimate,
        FixedMix,
        FrozenDict,
        PairedResult,
        PowerResult,
        ReliabilityWarning,
        SimpsonResult,
        Standardization,
        StandardizedRate,
        StatisticsWarning,
        TestResult,
        UnpairedResult,
    )
    from evaldelta.stats._sensitivity import break_even, delta_at_share, share_sweep
    from evaldelta.stats._settle import pairs_to_clear_paired_binary, pairs_to_clear_t
    from evaldelta.stats._standardize import fixed_mix, simpson_check, standardize
    from evaldelta.stats._thresholds import (
        MIN_CLUSTERS,
        MIN_INFORMATIVE,
        MIN_MINORITY_CASES,
        POISSON_EDGE,
        WALD_MIN_PAIRS,
    )

_WHERE = {
    "Asymmetry": "evaldelta.stats._leakage",
    "LeakageRule": "evaldelta.stats._leakage",
    "criterion_asymmetry": "evaldelta.stats._leakage",
    "BreakEven": "evaldelta.stats._results",
    "break_even": "evaldelta.stats._sensitivity",
    "Reducer": "evaldelta.stats._reducers",
    "parse_reducer": "evaldelta.stats._reducers",
    "reduce_values": "evaldelta.stats._reducers",
    "delta_at_share": "evaldelta.stats._sensitivity",
    "share_sweep": "evaldelta.stats._sensitivity",
    "ConfidenceInterval": "evaldelta.stats._results",
    "DegenerateDataWarning": "evaldelta.stats._results",
    "Estimate": "evaldelta.stats._results",
    "FixedMix": "evaldelta.stats._results",
    "FrozenDict": "evaldelta.stats._results",
    "MIN_CLUSTERS": "evaldelta.stats._thresholds",
    "MIN_INFORMATIVE": "evaldelta.stats._thresholds",
    "MIN_MINORITY_CASES": "evaldelta.stats._thresholds",
    "POISSON_EDGE": "evaldelta.stats._thresholds",
    "PairedResult": "evaldelta.stats._results",
    "PowerResult": "evaldelta.stats._results",
    "ReliabilityWarning": "evaldelta.stats._results",
    "SimpsonResult": "evaldelta.stats._results",
    "Standardization": "evaldelta.stats._results",
    "StandardizedRate": "evaldelta.stats._results",
    "StatisticsWarning": "evaldelta.stats._results",
    "TestResult": "evaldelta.stats._results",
    "UnpairedResult": "evaldelta.stats._results",
    "WALD_MIN_PAIRS": "evaldelta.stats._thresholds",
    "clustered_mean": "evaldelta.stats._cluster",
    "clustered_se": "evaldelta.stats._cluster",
    "clustered_se_from_summary": "evaldelta.stats._cluster",
    "fail_pvalue": "evaldelta.stats._inference",
    "fixed_mix": "evaldelta.stats._standardize",
    "holm": "evaldelta.stats._multiple",
    "interval_at": "evaldelta.stats._inference",
    "mcnemar_exact": "evaldelta.stats._paired",
    "mcnemar_exact_power": "evaldelta.stats._power",
    "mde_mcnemar": "evaldelta.stats._power",
    "mde_paired_t": "evaldelta.stats._power",
    "mean_t": "evaldelta.stats._means",
    "newcombe_unpaired": "evaldelta.stats._proportions",
    "paired_means": "evaldelta.stats._paired",
    "paired_means_from_summary": "evaldelta.stats._paired",
    "paired_proportions": "evaldelta.stats._paired",
    "pairs_to_clear_paired_binary": "evaldelta.stats._settle",
    "pairs_to_clear_t": "evaldelta.stats._settle",
    "proportion": "evaldelta.stats._proportions",
    "proportion_of_means": "evaldelta.stats._proportions",
    "required_pairs": "evaldelta.stats._power",
    "required_pairs_mcnemar": "evaldelta.stats._power",
    "simpson_check": "evaldelta.stats._standardize",
    "standardize": "evaldelta.stats._standardize",
    "t_critical": "evaldelta.stats._means",
    "welch": "evaldelta.stats._means",
    "wilson_interval": "evaldelta.stats._proportions",
    "z_critical": "evaldelta.stats._proportions",
}


__getattr__, __dir__ = lazy_names(__name__, _WHERE, globals())

__all__ = [
    "MIN_CLUSTERS",
    "MIN_INFORMATIVE",
    "MIN_MINORITY_CASES",
    "POISSON_EDGE",
    "WALD_MIN_PAIRS",
    "Asymmetry",
    "BreakEven",
    "ConfidenceInterval",
    "DegenerateDataWarning",
    "Estimate",
    "FixedMix",
    "FrozenDict",
    "LeakageRule",
    "PairedResult",
    "PowerResult",
    "Reducer",
    "ReliabilityWarning",
    "SimpsonResult",
    "Standardization",
    "StandardizedRate",
    "StatisticsWarning",
    "TestResult",
    "UnpairedResult",
    "break_even",
    "clustered_mean",
    "clustered_se",
    "clustered_se_from_summary",
    "criterion_asymmetry",
    "delta_at_share",
    "fail_pvalue",
    "fixed_mix",
    "holm",
    "interval_at",
    "mcnemar_exact",
    "mcnemar_exact_power",
    "mde_mcnemar",
    "mde_paired_t",
    "mean_t",
    "newcombe_unpaired",
    "paired_means",
    "paired_means_from_summary",
    "paired_proportions",
    "pairs_to_clear_paired_binary",
    "pairs_to_clear_t",
    "parse_reducer",
    "proportion",
    "proportion_of_means",
    "reduce_values",
    "required_pairs",
    "required_pairs_mcnemar",
    "share_sweep",
    "simpson_check",
    "standardize",
    "t_critical",
    "welch",
    "wilson_interval",
    "z_critical",
]
