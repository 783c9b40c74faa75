"""Pure statistics for comparing arms on the same cases (stdlib, numpy and scipy only).

Every function validates its arguments first (ValueError naming the bad value), returns a
frozen result dataclass or a float, and reports an undefined statistic as nan together with
a :class:`DegenerateDataWarning`. Differences are always candidate minus baseline.
"""

from evaldelta.stats._cluster import (
    MIN_CLUSTERS,
    clustered_mean,
    clustered_se,
    clustered_se_from_summary,
)
from evaldelta.stats._inference import fail_pvalue, interval_at
from evaldelta.stats._means import mean_t, t_critical, welch
from evaldelta.stats._multiple import holm
from evaldelta.stats._paired import (
    MIN_INFORMATIVE,
    WALD_MIN_PAIRS,
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
    MIN_MINORITY_CASES,
    POISSON_EDGE,
    newcombe_unpaired,
    proportion,
    proportion_of_means,
    wilson_interval,
    z_critical,
)
from evaldelta.stats._results import (
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
from evaldelta.stats._settle import pairs_to_clear_paired_binary, pairs_to_clear_t
from evaldelta.stats._standardize import fixed_mix, simpson_check, standardize

__all__ = [
    "MIN_CLUSTERS",
    "MIN_INFORMATIVE",
    "MIN_MINORITY_CASES",
    "POISSON_EDGE",
    "WALD_MIN_PAIRS",
    "ConfidenceInterval",
    "DegenerateDataWarning",
    "Estimate",
    "FixedMix",
    "FrozenDict",
    "PairedResult",
    "PowerResult",
    "ReliabilityWarning",
    "SimpsonResult",
    "Standardization",
    "StandardizedRate",
    "StatisticsWarning",
    "TestResult",
    "UnpairedResult",
    "clustered_mean",
    "clustered_se",
    "clustered_se_from_summary",
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
    "proportion",
    "proportion_of_means",
    "required_pairs",
    "required_pairs_mcnemar",
    "simpson_check",
    "standardize",
    "t_critical",
    "welch",
    "wilson_interval",
    "z_critical",
]
