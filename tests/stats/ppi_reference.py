"""Reference values for the PPI++ tests, from ppi_py 0.2.3 (the PPI authors' package).

Not a test module (no ``test_`` prefix): ``tests/stats/test_stats_ppi.py`` imports the seeded
datasets from here and holds the values this script printed as literals. ppi_py needs numba,
scikit-learn and statsmodels, which the project's venv does not carry; regenerate in a venv
of its own:

    python3 -m venv /tmp/ppi-venv && /tmp/ppi-venv/bin/pip install ppi-python==0.2.3
    PYTHONPATH=. /tmp/ppi-venv/bin/python tests/stats/ppi_reference.py

(from the repository root). The datasets come from the standard library's ``random`` (its
``random()`` stream is fixed across Python versions), so both venvs draw the same cases.
Each dataset is ``(judge, human)``: one judge score per case and the human label, NaN where
the case is unlabelled; ppi_py takes ``Y, Yhat`` (the labelled cases) and ``Yhat_unlabeled``
(the others) apart.
"""

from __future__ import annotations

import math
import random

NAN = math.nan


def _labelled(rng: random.Random, cases: int, n: int) -> set[int]:
    return set(rng.sample(range(cases), n))


def _binary(seed: int, cases: int, n: int, rate: float, agree: float) -> tuple[list, list]:
    rng = random.Random(seed)
    truth = [1.0 if rng.random() < rate else 0.0 for _ in range(cases)]
    judge = [t if rng.random() < agree else 1.0 - t for t in truth]
    keep = _labelled(rng, cases, n)
    return judge, [t if i in keep else NAN for i, t in enumerate(truth)]


def _graded(seed: int, cases: int, n: int, slope: float, noise: float) -> tuple[list, list]:
    rng = random.Random(seed)
    judge = [rng.gauss(0.5, 0.2) for _ in range(cases)]
    truth = [slope * (f - 0.5) + 0.45 + rng.gauss(0.0, noise) for f in judge]
    keep = _labelled(rng, cases, n)
    return judge, [t if i in keep else NAN for i, t in enumerate(truth)]


def dataset(name: str) -> tuple[list, list]:
    """One seeded dataset of judge scores and (partly missing) human labels."""
    if name == "binary":  # 300 cases, 60 labelled, judge agrees 85%
        return _binary(11, 300, 60, 0.7, 0.85)
    if name == "small":  # 38 cases, 8 labelled
        return _binary(12, 38, 8, 0.6, 0.8)
    if name == "graded":  # a judge that tracks the truth, offset by 0.05
        return _graded(13, 440, 40, 1.0, 0.1)
    if name == "negative":  # a judge that runs against the truth: lambda clips to 0
        return _graded(14, 200, 50, -0.8, 0.1)
    if name == "steep":  # the truth moves twice as fast as the judge: lambda clips to 1
        return _graded(15, 250, 100, 2.0, 0.05)
    raise KeyError(name)


def paired_dataset(name: str) -> tuple[list, list, list, list]:
    """Judge scores for both arms on every case, human labels for both on a random few."""
    rng = random.Random({"lenient": 21, "graded": 22}[name])
    cases, n = (400, 80) if name == "lenient" else (300, 45)
    keep = _labelled(rng, cases, n)
    fb, fc, yb, yc = [], [], [], []
    for i in range(cases):
        if name == "lenient":  # pass/fail; the judge passes the candidate's failures more
            hard = rng.random()
            b = 1.0 if rng.random() < 0.9 - 0.5 * hard else 0.0
            c = 1.0 if rng.random() < 0.92 - 0.5 * hard else 0.0
            jb = b if rng.random() < 0.88 else 1.0 - b
            jc = 1.0 if c == 0.0 and rng.random() < 0.35 else (c if rng.random() < 0.9 else 1 - c)
        else:  # graded scores 0-10, the judge kinder to the candidate by 0.4
            level = rng.gauss(6.0, 1.5)
            b, c = level + rng.gauss(0, 1), level + 0.3 + rng.gauss(0, 1)
            jb, jc = b + rng.gauss(0, 0.8), c + 0.4 + rng.gauss(0, 0.8)
        fb.append(jb)
        fc.append(jc)
        yb.append(b if i in keep else NAN)
        yc.append(c if i in keep else NAN)
    return fb, fc, yb, yc


MEANS = ("binary", "small", "graded", "negative", "steep")
PAIRED = ("lenient", "graded")


def _reference(judge: list, human: list, alpha: float) -> dict[str, object]:
    import numpy as np
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_pval
    from ppi_py.ppi import _calc_lam_glm

    f, y = np.asarray(judge), np.asarray(human)
    lab = ~np.isnan(y)
    Y, Yhat, Yhat_unl = y[lab], f[lab], f[~lab]
    # the lambda ppi_mean_ci(lam=None) tunes: its own call of _calc_lam_glm, clip=True
    est1 = ppi_mean_pointestimate(Y, Yhat, Yhat_unl, lam=1)
    lam = _calc_lam_glm(Y - est1, Yhat - est1, Yhat_unl - est1, np.eye(1), clip=True)

    def pair(ci: tuple) -> tuple[float, float]:
        return (float(np.ravel(ci[0])[0]), float(np.ravel(ci[1])[0]))

    return {
        "lam": float(lam),
        "tuned": float(np.ravel(ppi_mean_pointestimate(Y, Yhat, Yhat_unl, lam=None))[0]),
        "tuned_ci": pair(ppi_mean_ci(Y, Yhat, Yhat_unl, alpha=alpha, lam=None)),
        "tuned_p": float(np.ravel(ppi_mean_pval(Y, Yhat, Yhat_unl, null=0, lam=lam))[0]),
        "plain": float(np.ravel(ppi_mean_pointestimate(Y, Yhat, Yhat_unl, lam=1))[0]),
        "plain_ci": pair(ppi_mean_ci(Y, Yhat, Yhat_unl, alpha=alpha, lam=1)),
        "classical_ci": pair(classical_mean_ci(Y, alpha=alpha)),
        "judge_ci": pair(classical_mean_ci(f, alpha=alpha)),
    }


def main() -> None:
    from importlib.metadata import version

    import numpy as np
    import ppi_py  # noqa: F401  # fail early outside its venv

    print(f"# ppi_py {version('ppi-python')}, alpha 0.05 (0.1 for 'binary@90')")
    out: dict[str, object] = {}
    for name in MEANS:
        out[name] = _reference(*dataset(name), 0.05)
    out["binary@90"] = _reference(*dataset("binary"), 0.1)
    for name in PAIRED:
        fb, fc, yb, yc = (np.asarray(a) for a in paired_dataset(name))
        out[f"paired:{name}"] = _reference(list(fc - fb), list(yc - yb), 0.05)
    print("PPI_PY = {")
    for key, values in out.items():
        print(f"    {key!r}: {values!r},")
    print("}")


if __name__ == "__main__":
    main()
