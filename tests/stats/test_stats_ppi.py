"""PPI++ means and paired deltas against ppi_py 0.2.3, the PPI authors' package.

The values below were printed by ``tests/stats/ppi_reference.py`` run in a venv with
``ppi-python==0.2.3`` (numpy 2.4.6, scipy 1.17.1), on the seeded datasets that script
defines (imported here, so both sides read the same cases). Per dataset, with ``Y, Yhat``
the labelled cases' labels and judge scores and ``Yhat_unlabeled`` the other cases' judge
scores, at ``alpha = 0.05`` (``binary@90``: 0.1):

- ``lam``: ``ppi_py.ppi._calc_lam_glm(Y - e, Yhat - e, Yhat_unlabeled - e, eye(1),
  clip=True)`` with ``e = ppi_mean_pointestimate(..., lam=1)``, the call ``ppi_mean_ci``
  makes when ``lam=None``;
- ``tuned`` / ``tuned_ci``: ``ppi_mean_pointestimate(Y, Yhat, Yhat_unlabeled, lam=None)`` /
  ``ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=alpha, lam=None)``;
- ``tuned_p``: ``ppi_mean_pval(Y, Yhat, Yhat_unlabeled, null=0, lam=lam)`` (its own
  ``lam=None`` does not clip lambda, unlike ``ppi_mean_ci``; hence the explicit lambda);
- ``plain`` / ``plain_ci``: the same with ``lam=1`` (PPI without power tuning);
- ``classical_ci``: ``classical_mean_ci(Y, alpha=alpha)``; ``judge_ci``:
  ``classical_mean_ci(all judge scores, alpha=alpha)``;
- ``paired:*``: the same calls on the per-case deltas ``candidate - baseline``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats as sps
from tests.stats.ppi_reference import MEANS, PAIRED, dataset, paired_dataset

import evaldelta.stats as es

# fmt: off
PPI_PY = {  # ppi_py 0.2.3: tests/stats/ppi_reference.py (calls in the module docstring)
    'binary': {'lam': 0.6177586234726327, 'tuned': 0.6357787354930351, 'tuned_ci': (0.5528906522500666, 0.7186668187360036), 'tuned_p': 4.425314489715346e-51, 'plain': 0.6166666666666666, 'plain_ci': (0.5216164586644633, 0.7117168746688699), 'classical_ci': (0.5473870570855228, 0.7859462762478104), 'judge_ci': (0.589128657402003, 0.6975380092646636)},  # noqa: E501
    'small': {'lam': 0.2956321022727273, 'tuned': 0.8109463778409092, 'tuned_ci': (0.6197471071505729, 1.0021456485312454), 'tuned_p': 9.336948994083281e-17, 'plain': 0.6583333333333333, 'plain_ci': (0.3678340641420376, 0.948832602524629), 'classical_ci': (0.6458276962323382, 1.1041723037676618), 'judge_ci': (0.4219674757432387, 0.7359272610988666)},  # noqa: E501
    'graded': {'lam': 0.48471500789844996, 'tuned': 0.4505498747364466, 'tuned_ci': (0.4183069978383805, 0.4827927516345127), 'tuned_p': 3.8323334737632793e-165, 'plain': 0.46044290776250935, 'plain_ci': (0.4274374107570614, 0.4934484047679573), 'classical_ci': (0.39302975937849943, 0.48945775936820685), 'judge_ci': (0.49038592187534796, 0.5271971029419238)},  # noqa: E501
    'negative': {'lam': 0.0, 'tuned': 0.48590313947795705, 'tuned_ci': (0.43219014246800436, 0.5396161364879097), 'tuned_p': 2.4431185845177166e-70, 'plain': 0.5044811530890612, 'plain_ci': (0.39557406909169934, 0.613388237086423), 'classical_ci': (0.43219014246800436, 0.5396161364879097), 'judge_ci': (0.4890172075199711, 0.5420864118420138)},  # noqa: E501
    'steep': {'lam': 1.0, 'tuned': 0.4285291755594178, 'tuned_ci': (0.37090675214532387, 0.4861515989735117), 'tuned_p': 3.9950679704686956e-48, 'plain': 0.4285291755594178, 'plain_ci': (0.37090675214532387, 0.4861515989735117), 'classical_ci': (0.33919888773522505, 0.5193539012416086), 'judge_ci': (0.46590063569346374, 0.5188363720237562)},  # noqa: E501
    'binary@90': {'lam': 0.6177586234726327, 'tuned': 0.6357787354930351, 'tuned_ci': (0.5662168632195265, 0.7053406077665437), 'tuned_p': 4.425314489715346e-51, 'plain': 0.6166666666666666, 'plain_ci': (0.536898017544471, 0.6964353157888622), 'classical_ci': (0.5665640627471656, 0.7667692705861676), 'judge_ci': (0.597843335299364, 0.6888233313673027)},  # noqa: E501
    'paired:lenient': {'lam': 0.5149390243902439, 'tuned': 0.03169493140243902, 'tuned_ci': (-0.06784934743194526, 0.1312392102368233), 'tuned_p': 0.5325926587708597, 'plain': 0.096875, 'plain_ci': (-0.031652355548746666, 0.22540235554874666), 'classical_ci': (-0.16453790283403938, 0.08953790283403937), 'judge_ci': (0.08232902144546131, 0.20767097855453867)},  # noqa: E501
    'paired:graded': {'lam': 0.42482321517939065, 'tuned': 0.4754221739129788, 'tuned_ci': (0.2600777178186876, 0.69076663000727), 'tuned_p': 1.5110657901038111e-05, 'plain': 0.43730419345375826, 'plain_ci': (0.1119753591957337, 0.7626330277117828), 'classical_ci': (0.17380074591817735, 0.8333511700926879), 'judge_ci': (0.4703888483082722, 0.8595376420038355)},  # noqa: E501
}
# fmt: on
REL = 1e-10


def _ci(ci: es.ConfidenceInterval) -> tuple[float, float]:
    return (ci.low, ci.high)


def _check_mean(res: es.PPIMean | es.PPIPaired, ref: dict[str, object]) -> None:
    assert res.lam == pytest.approx(ref["lam"], rel=REL, abs=1e-14)
    assert res.tuned
    assert res.ppi.estimate == pytest.approx(ref["tuned"], rel=REL)
    assert _ci(res.ppi.ci) == pytest.approx(ref["tuned_ci"], rel=REL)
    assert _ci(res.labelled_only.ci) == pytest.approx(ref["classical_ci"], rel=REL)
    assert _ci(res.judge_only.ci) == pytest.approx(ref["judge_ci"], rel=REL)


@pytest.mark.parametrize("name", [*MEANS, "binary@90"])
def test_ppi_mean_matches_ppi_py(name: str) -> None:
    ref = PPI_PY[name]
    judge, human = dataset(name.split("@")[0])
    conf = 0.9 if name.endswith("@90") else 0.95
    _check_mean(es.ppi_mean(judge, human, confidence=conf), ref)
    plain = es.ppi_mean(judge, human, confidence=conf, lam=1.0)
    assert not plain.tuned and plain.lam == 1.0
    assert plain.ppi.estimate == pytest.approx(ref["plain"], rel=REL)
    assert _ci(plain.ppi.ci) == pytest.approx(ref["plain_ci"], rel=REL)


@pytest.mark.parametrize("name", PAIRED)
def test_ppi_paired_matches_ppi_py_on_the_deltas(name: str) -> None:
    ref = PPI_PY[f"paired:{name}"]
    res = es.ppi_paired(*paired_dataset(name))
    _check_mean(res, ref)
    assert res.ppi.pvalue == pytest.approx(ref["tuned_p"], rel=1e-8)
    plain = es.ppi_paired(*paired_dataset(name), lam=1.0)
    assert plain.ppi.estimate == pytest.approx(ref["plain"], rel=REL)
    assert _ci(plain.ppi.ci) == pytest.approx(ref["plain_ci"], rel=REL)


def test_the_convention_is_n_labelled_and_n_other_cases() -> None:
    # the unlabelled mean is over the cases without a label (ppi_py's Yhat_unlabeled), so
    # the estimate is lam * mean(f_U) + mean(y - lam f_L), written out here by hand
    judge, human = dataset("graded")
    f, y = np.asarray(judge), np.asarray(human)
    lab = ~np.isnan(y)
    res = es.ppi_mean(judge, human)
    assert (res.n_labelled, res.n_unlabelled) == (40, 400)
    lam = res.lam
    by_hand = lam * f[~lab].mean() + (y[lab] - lam * f[lab]).mean()
    assert res.ppi.estimate == pytest.approx(by_hand, rel=1e-12)
    se = math.sqrt((lam * f[~lab]).var() / 400 + (y[lab] - lam * f[lab]).var() / 40)
    assert res.ppi.se == pytest.approx(se, rel=1e-10)
    assert res.labelled_only.estimate == pytest.approx(y[lab].mean())
    assert res.judge_only.estimate == pytest.approx(f.mean())
    assert res.ppi.n == 440 and res.labelled_only.n == 40 and res.judge_only.n == 440


@pytest.mark.parametrize("name", MEANS)
def test_lambda_zero_is_the_labelled_only_interval(name: str) -> None:
    res = es.ppi_mean(*dataset(name), lam=0.0)
    assert res.ppi.estimate == pytest.approx(res.labelled_only.estimate, rel=1e-12)
    assert _ci(res.ppi.ci) == pytest.approx(_ci(res.labelled_only.ci), rel=1e-12)


@pytest.mark.parametrize("name", MEANS)
def test_tuning_is_not_wider_than_labelled_only_on_these_datasets(name: str) -> None:
    # asymptotically guaranteed (Angelopoulos, Duchi and Zrnic 2023); measured here
    res = es.ppi_mean(*dataset(name))
    assert res.ppi.se <= res.labelled_only.se * (1 + 1e-12)


def test_moments_give_the_same_result() -> None:
    judge, human = dataset("binary")
    direct = es.ppi_mean(judge, human)
    assert es.ppi_mean_from_moments(es.ppi_moments(judge, human)) == direct
    fb, fc, yb, yc = (np.asarray(a) for a in paired_dataset("lenient"))
    paired = es.ppi_paired(fb, fc, yb, yc)
    from_moments = es.ppi_paired_from_moments(es.ppi_moments(fc - fb, yc - yb))
    assert from_moments.bias is None and from_moments.ppi.informative is None
    assert from_moments.ppi.ci == paired.ppi.ci and from_moments.lam == paired.lam
    assert paired.ppi.informative == int(np.count_nonzero(fc - fb))
    lab = ~np.isnan(yb)
    assert paired.labelled_only.informative == int(np.count_nonzero((yc - yb)[lab]))


def test_paired_results_work_with_interval_at_and_fail_pvalue() -> None:
    res = es.ppi_paired(*paired_dataset("graded"))
    again = es.interval_at(res.ppi, 0.95)
    assert _ci(again) == pytest.approx(_ci(res.ppi.ci), rel=1e-12)
    # the gate's one-sided p-value at the upper end of the 95% interval is 0.025 (normal)
    mean = es.ppi_mean(*dataset("binary"))
    assert es.fail_pvalue(mean.ppi, mean.ppi.ci.high) == pytest.approx(0.025, rel=1e-9)
    assert es.fail_pvalue(res.ppi, res.ppi.ci.high) == pytest.approx(0.025, rel=1e-9)
    assert res.ppi.pvalue == pytest.approx(2 * sps.norm.sf(abs(res.ppi.estimate / res.ppi.se)))


def test_judge_bias_matches_scipy() -> None:
    fb, fc, yb, yc = (np.asarray(a) for a in paired_dataset("graded"))
    lab = ~np.isnan(yb)
    db, dc = (fb - yb)[lab], (fc - yc)[lab]
    bias = es.judge_bias(fb, fc, yb, yc)
    assert bias.n == 45
    for got, values in ((bias.baseline, db), (bias.candidate, dc)):
        ref = sps.ttest_1samp(values, 0.0)
        assert got.estimate == pytest.approx(values.mean(), rel=1e-12)
        assert _ci(got.ci) == pytest.approx(tuple(ref.confidence_interval(0.95)), rel=1e-10)
    ref = sps.ttest_rel(dc, db)
    assert bias.difference.estimate == pytest.approx(dc.mean() - db.mean(), rel=1e-12)
    assert bias.difference.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    assert _ci(bias.difference.ci) == pytest.approx(tuple(ref.confidence_interval()), rel=1e-10)
    assert es.ppi_paired(fb, fc, yb, yc).bias == bias


def test_judge_bias_is_what_the_judge_only_delta_is_off_by() -> None:
    # on the labelled cases: judge delta - human delta = bias_c - bias_b, case by case
    fb, fc, yb, yc = (np.asarray(a) for a in paired_dataset("lenient"))
    lab = ~np.isnan(yb)
    bias = es.judge_bias(fb, fc, yb, yc)
    gap = ((fc - fb) - (yc - yb))[lab].mean()
    assert bias.difference.estimate == pytest.approx(gap, abs=1e-12)
    assert bias.candidate.estimate > bias.baseline.estimate  # the judge is lenient on it


def test_judge_confusion_counts() -> None:
    judge = [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]
    human = [1.0, 0.0, 1.0, 0.0, math.nan, 0.0]
    conf = es.judge_confusion(judge, human)
    assert (conf.both_pass, conf.judge_pass_human_fail) == (1, 1)
    assert (conf.judge_fail_human_pass, conf.both_fail) == (1, 2)
    assert conf.agreement == pytest.approx(3 / 5)
    assert math.isnan(es.judge_confusion([1.0], [math.nan]).agreement)
    assert es.judge_confusion([0.7, 0.2], [0.6, 0.6], threshold=0.5).both_pass == 1


def test_no_unlabelled_case_is_the_labelled_only_mean() -> None:
    res = es.ppi_mean([1.0, 0.0, 1.0, 1.0], [1.0, 0.0, 0.0, 1.0], lam=1.0)
    assert res.lam == 0.0 and res.n_unlabelled == 0
    assert res.ppi.estimate == res.labelled_only.estimate == 0.5
    assert res.ppi.ci == res.labelled_only.ci


def test_a_judge_that_never_varies_gets_lambda_zero() -> None:
    human = [1.0, 0.0, 1.0, math.nan, math.nan, math.nan]
    with pytest.warns(es.DegenerateDataWarning, match="the judge-only interval is undefined"):
        res = es.ppi_mean([1.0] * 6, human)
    assert res.lam == 0.0
    assert res.ppi.estimate == pytest.approx(2 / 3)
    assert math.isnan(res.judge_only.ci.low)  # zero width is refused


def test_too_few_labels_are_nan_with_a_warning() -> None:
    with pytest.warns(es.DegenerateDataWarning, match="1 labelled of 4"):
        res = es.ppi_mean([1.0, 0.0, 1.0, 1.0], [1.0, math.nan, math.nan, math.nan])
    assert res.labelled_only.estimate == 1.0 and math.isnan(res.labelled_only.ci.low)
    assert math.isnan(res.ppi.se) and math.isnan(res.ppi.ci.high)
    assert res.judge_only.ci.low < res.judge_only.ci.high
    with pytest.warns(es.DegenerateDataWarning, match="0 labelled of 0"):
        empty = es.ppi_mean([], [])
    assert math.isnan(empty.ppi.estimate) and math.isnan(empty.judge_only.estimate)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: es.ppi_mean([1.0, math.inf], [1.0, 0.0]), "judge must be finite; got inf at"),
        (lambda: es.ppi_mean([1.0, 0.0], [1.0, -math.inf]), r"human must be finite or nan"),
        (lambda: es.ppi_mean([1.0, 0.0], [1.0]), "judge has 2, human has 1"),
        (lambda: es.ppi_mean([[1.0]], [[1.0]]), "judge must be one-dimensional"),
        (lambda: es.ppi_mean(["a"], [1.0]), "judge must be a sequence of numbers"),
        (lambda: es.ppi_mean([1.0, 0.0], [1.0, 0.0], lam=1.5), "lam must be between 0 and 1"),
        (lambda: es.ppi_mean([1.0, 0.0], [1.0, 0.0], confidence=95), "confidence"),
        (
            lambda: es.ppi_paired([1.0, 0.0], [1.0, 1.0], [1.0, math.nan], [1.0, 0.0]),
            "position 1 has a human label for one arm only",
        ),
        (
            lambda: es.ppi_mean_from_moments(es.PPIMoments(-1, 0, 0, 0, 0, 0, 3, 1.0, 1.0)),
            "moments.n_labelled must be a non-negative integer; got -1",
        ),
        (
            lambda: es.ppi_mean_from_moments(es.PPIMoments(2, 1, -1, 1, 1, 1, 3, 1.0, 1.0)),
            "moments.sumsq_human must be non-negative; got -1",
        ),
        (lambda: es.ppi_mean_from_moments((2, 1.0)), "moments must be a PPIMoments"),
        (lambda: es.judge_confusion([1.0], [1.0], threshold=math.nan), "threshold"),
    ],
)
def test_bad_arguments_name_the_value(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


def test_results_are_frozen_and_serialize() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", es.StatisticsWarning)
        results = [
            es.ppi_mean(*dataset("binary")),
            es.ppi_paired(*paired_dataset("lenient")),
            es.judge_confusion([1.0, 0.0], [1.0, 1.0]),
            es.ppi_moments(*dataset("small")),
        ]
    for result in results:
        assert json.loads(json.dumps(dataclasses.asdict(result), allow_nan=True)) is not None
        with pytest.raises(dataclasses.FrozenInstanceError):
            result.confidence = 0.5  # type: ignore[misc,union-attr]
