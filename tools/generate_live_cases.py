"""Write the case set of `evaldelta demo --live` (deterministic; committed output).

Three slices of short questions with one mechanical answer each, so a 135M-parameter
model gets some right and some wrong, and two prompt versions can differ:
arithmetic (small sums), order_number (extract the number from a customer message) and
capital (one-word capitals). Run: python tools/generate_live_cases.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import random
from pathlib import Path

SEED = 20261130
CAPITALS = [
    ("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Spain", "Madrid"),
    ("Germany", "Berlin"), ("Egypt", "Cairo"), ("Canada", "Ottawa"), ("Peru", "Lima"),
    ("Kenya", "Nairobi"), ("Norway", "Oslo"), ("Greece", "Athens"), ("Portugal", "Lisbon"),
]  # fmt: skip


def rows() -> list[dict[str, str]]:
    rng = random.Random(SEED)
    out = []
    for i in range(12):
        a, b = rng.randint(2, 40), rng.randint(2, 40)
        out.append({
            "case_id": f"arith-{i:02d}", "slice": "arithmetic",
            "question": f"What is {a} plus {b}?", "expected": str(a + b),
        })  # fmt: skip
    for i in range(12):
        n = rng.randint(1000, 9999)
        out.append({
            "case_id": f"order-{i:02d}", "slice": "order_number",
            "question": f"A customer wrote: 'Hello, my parcel for order #{n} has not arrived "
            "yet.' What is the order number?",
            "expected": str(n),
        })  # fmt: skip
    for i, (country, capital) in enumerate(CAPITALS):
        out.append({
            "case_id": f"capital-{i:02d}", "slice": "capital",
            "question": f"What is the capital of {country}?", "expected": capital,
        })  # fmt: skip
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("src/evaldelta/data/live"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "cases.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, ["case_id", "slice", "question", "expected"])
        writer.writeheader()
        writer.writerows(rows())


if __name__ == "__main__":
    main()
