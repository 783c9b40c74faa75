"""Generate the seed-002 support-ticket scenario for `evaldelta demo` and `evaldelta audit`.

Run from the repository root:

    /work/venv/bin/python tools/generate_audit_demo.py [--out DIR]

Writes src/evaldelta/data/seed002_tickets/ (tests/checks/test_audit.py checks that a re-run
reproduces it byte for byte):

* ``tickets.csv``: 40 tickets (the ids, ticket types and pass/fail outcomes of
  ``seed002.csv``, taken from ``generate_demo_data.build_seed002`` with the same seed),
  with order number, depot, the customer's message, and the policy's permitted
  timeframes and remedies (``|``-separated).
* ``goldens/<case_id>.txt``: the incumbent's replies recorded a year ago (the yardstick).
* ``goldens_candidate/<case_id>.txt``: the same recording procedure run on the candidate
  (only for the symmetry test).
* ``replies.csv``: fresh replies, one per ticket and arm (``incumbent``, ``candidate``).
* ``checks.yaml``: the seed's six requirements as five mechanical checks and two judge
  checks (next step, tone); the offline demo runs the mechanical five.
* ``checks_with_signoff.yaml``: the same plus ``sign_off``, a criterion that encodes the
  incumbent's two sign-offs (the rubric leakage demo: 39/40 vs 11/40, split 28 to 0).
* ``MANIFEST.json``: the seed and the numbers the data is built to reproduce.

Construction: every reply is assembled from sentence variants, so which replies are equal
after whitespace normalization is decided by the role each ticket gets (drawn with
``default_rng([SEED, 2002])``). Targets (seed 002): exact match incumbent 14/40 and
candidate 11/40 against the goldens; mechanical requirements 34/40 and 36/40 with the
33/1/3/3 cross-tab of seed002.csv; of the candidate's 29 exact-match failures 27 are
cosmetic (22 rephrased, 5 sign-off only) and 2 substantive (T2288 offers a goodwill credit
where the golden offered a replacement: allowed, but a different remedy; T2301 promises
"delivery by Friday"); on the candidate's own recording the candidate scores 15/40 and the
incumbent 9/40, so the winner follows whoever wrote the yardstick. The three tickets both
arms fail are tickets whose recorded golden itself breaks a requirement (too long, a
timeframe policy does not permit, no order number) and which the candidate reproduces
word for word: exact match scores them as passes.
"""

# ruff: noqa: E501  (reply templates are data: one sentence per line reads better)
from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate_demo_data import SEED, build_seed002, write_csv

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "src" / "evaldelta" / "data" / "seed002_tickets"
ROLE_STREAM = 2002
MODELS = {"incumbent": "claude-opus-4-8", "candidate": "claude-opus-5-1"}
DEPOTS = ("Manchester", "Leeds", "Bristol", "Glasgow", "Birmingham", "Southampton")
POLICY = {
    "delivery_delay": (("2 working days", "5 working days"), ("replacement", "refund")),
    "damaged_item": (("2 working days", "5 working days"), ("replacement", "refund", "credit")),
    "refund_request": (("5 working days", "10 working days"), ("refund",)),
    "wrong_item": (("2 working days",), ("replacement", "refund")),
}
ASKS = {
    "delivery_delay": "Hi, my order #{o} still hasn't arrived and the tracking hasn't moved in days. Where is it?",
    "damaged_item": "Hello, order #{o} arrived today with the box crushed and the item broken. Photos attached.",
    "refund_request": "I sent order #{o} back two weeks ago and still haven't had my refund. Can you check?",
    "wrong_item": "Order #{o} came with the wrong item in it. I need the one I actually ordered.",
}
INC_PROBLEM = {
    "delivery_delay": "I'm sorry your order {ref}hasn't arrived yet.",
    "damaged_item": "I'm sorry your order {ref}arrived damaged.",
    "refund_request": "I'm sorry you've had to chase us about your return of order {ref}".rstrip()
    + ".",
    "wrong_item": "I'm sorry your order {ref}contained the wrong item.",
}
INC_CONTEXT = {
    "delivery_delay": (
        "Our courier shows it as delayed at the {d} depot.",
        "Our courier's tracking shows it held up at the {d} depot.",
    ),
    "damaged_item": (
        "Our {d} depot has logged the damage report you sent.",
        "The {d} depot has confirmed the damage from your photos.",
    ),
    "refund_request": (
        "Our {d} depot has now received the returned parcel.",
        "The {d} depot confirms your return has been checked in.",
    ),
    "wrong_item": (
        "Our {d} depot has confirmed a picking error on this order.",
        "The {d} depot has confirmed the wrong item was packed.",
    ),
}
INC_ACTION = {
    "delivery_delay": (
        "I've raised this with them and you should have an update within {t}.",
        "I've chased this with them, and you should hear from us within {t}.",
    ),
    "damaged_item": (
        "I've arranged for a courier to collect it, and you should have an update within {t}.",
        "A courier will collect it, and we'll confirm the next steps within {t}.",
    ),
    "refund_request": (
        "I've approved your refund, and it should reach your original payment method within {t}.",
        "Your refund is approved and will be back on your original payment method within {t}.",
    ),
    "wrong_item": (
        "I've arranged for a courier to collect it, and you should have an update within {t}.",
        "A courier will collect it, and we'll confirm the next steps within {t}.",
    ),
}
INC_REMEDY = {
    "delivery_delay": "If it hasn't moved by then we'll send a replacement at no cost.",
    "damaged_item": "Once it's collected we'll send a replacement at no cost.",
    "refund_request": "You'll get an email from us as soon as it's processed.",
    "wrong_item": "Once it's collected we'll send a replacement at no cost.",
}
INC_NEXT = "Just reply to this email if there's anything else we can help with."
INC_SIGNOFFS = ("Kind regards,\nThe Support Team", "Best wishes,\nCustomer Support")
CAND_BODY = {
    "delivery_delay": "I'm sorry to hear order #{o} still hasn't reached you. The tracking shows it held at our {d} depot, and I've escalated it with the courier — {when}. If there's no movement by then, we'll ship a replacement free of charge.",
    "damaged_item": "I'm sorry to hear order #{o} reached you damaged. Our {d} depot has the photos you sent, and a courier will pick the item up — we'll confirm everything within {t}. After that, {remedy}.",
    "refund_request": "I'm sorry you've had to chase this for order #{o}. Our {d} depot has checked your return in, so your refund is approved — it will reach your original payment method within {t}.",
    "wrong_item": "I'm sorry to hear order #{o} arrived with the wrong item in it. Our {d} depot has confirmed the picking error, and a courier will collect the item — we'll confirm the details within {t}. We'll then ship the correct item as a replacement free of charge.",
}
CAND_NEXT = (
    "If you have any questions in the meantime, just reply here.",
    "Reply to this message any time and we'll pick it up from there.",
)
CAND_SIGNOFFS = ("Best,\nThe Support Team", "Warm regards,\nCustomer Care")
LONG_PARAGRAPH = (
    "While we look into this, it may help to know how our delivery network works. Parcels "
    "travel from our central warehouse to a regional depot, where they are sorted by "
    "postcode and handed to a local courier for the final leg of the journey. Most parcels "
    "pass through this process without any trouble, but occasionally a label is damaged, a "
    "vehicle is delayed or a parcel is sorted to the wrong route, and it then needs to be "
    "traced by hand. Our team checks the scan history at every stage, speaks to the depot "
    "directly, and keeps a note of every step on your account so that anyone you speak to "
    "can see the full history without asking you to repeat yourself. We know how "
    "frustrating it is to wait for something you have paid for, and we are grateful for "
    "your patience while we work through it with the courier and the depot team."
)


def wrap(body: str, signoff: str, width: int = 78) -> str:
    """Paragraph-wrapped body, a blank line, and the sign-off; ends with a newline."""
    paras = [textwrap.fill(p, width) for p in body.split("\n\n")]
    return "\n\n".join(paras) + "\n\n" + signoff + "\n"


def incumbent(
    t: dict[str, str], alt: int = 0, signoff: int = 0, width: int = 78, flaw: str = ""
) -> str:
    """An incumbent-style reply; ``flaw`` breaks one requirement on purpose."""
    ty, tf = t["slice"], t["timeframe"]
    ref = "" if flaw == "no_order" else f"#{t['order_number']} "
    if flaw == "bad_timeframe":
        tf = "14 working days"
    if flaw == "short":
        return wrap(
            f"Sorry about order #{t['order_number']}. We'll sort it within {tf}.",
            "Thanks,\nSupport",
        )
    action = INC_ACTION[ty][alt].format(t=tf)
    if flaw == "tomorrow":
        action = (
            action.split(" within ")[0].replace(
                "you should have an update", "it should be with you"
            )
            + " tomorrow."
        )
    body = " ".join(
        [
            "Thanks for getting in touch.",
            INC_PROBLEM[ty].format(ref=ref),
            INC_CONTEXT[ty][alt].format(d=t["depot"]),
            action,
            INC_REMEDY[ty],
            INC_NEXT,
        ]
    )
    if flaw == "long":
        body += "\n\n" + LONG_PARAGRAPH
    return wrap(body, INC_SIGNOFFS[signoff], width)


def candidate(t: dict[str, str], alt: int = 0, when: str = "", remedy: str = "replacement") -> str:
    """A candidate-style reply (``when`` overrides the timeframe clause of a delivery reply)."""
    ty, tf = t["slice"], t["timeframe"]
    remedy_text = (
        "we'll add a goodwill credit for the full order value to your account"
        if remedy == "credit"
        else "we'll ship a replacement free of charge"
    )
    body = CAND_BODY[ty].format(
        o=t["order_number"],
        d=t["depot"],
        t=tf,
        remedy=remedy_text,
        when=when or f"you should hear back within {tf}",
    )
    return wrap(body + " " + CAND_NEXT[alt], CAND_SIGNOFFS[alt])


def roles(
    ids: list[int], cells: dict[int, tuple[int, int]], rng: np.random.Generator
) -> dict[int, dict[str, object]]:
    """Assign every ticket its role; see the module docstring for the targets."""
    named = {
        2214: {"role": "rephrased", "fi_eq": False},
        2288: {"role": "credit", "fi_eq": False},
        2301: {"role": "friday", "fi_eq": True},
    }
    both = [i for i in ids if cells[i] == (1, 1) and i not in named]
    only_cand = [i for i in ids if cells[i] == (0, 1)]
    both_fail = [i for i in ids if cells[i] == (0, 0)]
    both = [both[k] for k in rng.permutation(len(both))]
    out: dict[int, dict[str, object]] = dict(named)
    for k, i in enumerate(both[:8]):
        out[i] = {"role": "shared", "fi_eq": k < 6, "ws": k in (0, 1, 6)}
    for k, i in enumerate(both[8:13]):
        out[i] = {"role": "signoff", "fi_eq": k < 2}
    for k, i in enumerate(both[13:]):
        out[i] = {"role": "rephrased", "fi_eq": k < 2, "gc_eq": 2 <= k < 6}
    for i, flaw in zip(sorted(only_cand), ("no_order", "tomorrow", "short"), strict=True):
        out[i] = {"role": "rephrased", "fi_eq": False, "fi_flaw": flaw}
    for i, flaw in zip(sorted(both_fail), ("long", "bad_timeframe", "no_order"), strict=True):
        out[i] = {"role": "shared", "fi_eq": True, "g_flaw": flaw}
    return out


def build(rng: np.random.Generator) -> tuple[list[dict[str, str]], dict[int, dict[str, str]]]:
    """Tickets, and per ticket the four texts: golden, fresh incumbent, candidate, cand golden."""
    rows = build_seed002(np.random.default_rng([SEED, 2]))
    cells: dict[int, tuple[int, int]] = {}
    types: dict[int, str] = {}
    for case_id, ty, arm, _, score in rows:
        n = int(str(case_id)[1:])
        types[n] = str(ty)
        inc, cand = cells.get(n, (0, 0))
        cells[n] = (int(score), cand) if arm == "incumbent" else (inc, int(score))
    ids = sorted(cells)
    depot_idx = rng.choice(len(DEPOTS), size=len(ids))
    tickets = []
    for n, d in zip(ids, depot_idx, strict=True):
        ty = types[n]
        timeframes, remedies = POLICY[ty]
        tickets.append(
            {
                "case_id": f"T{n}",
                "slice": ty,
                "order_number": str(n),
                "depot": "Manchester" if n == 2214 else DEPOTS[int(d)],
                "timeframe": "5 working days" if n == 2301 else timeframes[0],
                "permitted_timeframes": "|".join(timeframes),
                "permitted_remedies": "|".join(remedies),
                "ticket_text": ASKS[ty].format(o=n),
            }
        )
    assigned = roles(ids, cells, rng)
    texts: dict[int, dict[str, str]] = {}
    for t in tickets:
        n = int(t["order_number"])
        r = assigned[n]
        golden = incumbent(t, flaw=str(r.get("g_flaw", "")))
        if r.get("fi_eq"):
            fresh = incumbent(t, width=70, flaw=str(r.get("g_flaw", ""))) if r.get("ws") else golden
        elif r.get("fi_flaw"):
            fresh = incumbent(t, alt=1, flaw=str(r["fi_flaw"]))
        else:
            fresh = incumbent(t, alt=1, signoff=n % 2)
        role = r["role"]
        if role == "shared":
            cand = golden.replace("\n", "  \n") if n % 3 == 0 and not r.get("g_flaw") else golden
        elif role == "signoff":
            cand = golden.replace(INC_SIGNOFFS[0], CAND_SIGNOFFS[0])
        elif role == "credit":
            cand = candidate(t, remedy="credit")
        elif role == "friday":
            cand = candidate(t, when="you can expect delivery by Friday")
        else:
            cand = candidate(t)
        cand_golden = (
            golden if role == "shared" else (cand if r.get("gc_eq") else candidate(t, alt=1))
        )
        texts[n] = {
            "golden": golden,
            "incumbent": fresh,
            "candidate": cand,
            "golden_candidate": cand_golden,
        }
    return tickets, texts


def norm(text: str) -> str:
    """Whitespace normalization used by the audit."""
    return " ".join(text.split())


def verify(texts: dict[int, dict[str, str]]) -> dict[str, int]:
    """The exact-match counts the data must reproduce (raises if a target is missed)."""

    def count(a: str, b: str) -> int:
        return sum(norm(v[a]) == norm(v[b]) for v in texts.values())

    got = {
        "incumbent_vs_goldens": count("incumbent", "golden"),
        "candidate_vs_goldens": count("candidate", "golden"),
        "candidate_vs_candidate_goldens": count("candidate", "golden_candidate"),
        "incumbent_vs_candidate_goldens": count("incumbent", "golden_candidate"),
        "incumbent_vs_goldens_raw": sum(
            v["incumbent"].strip() == v["golden"].strip() for v in texts.values()
        ),
        "candidate_vs_goldens_raw": sum(
            v["candidate"].strip() == v["golden"].strip() for v in texts.values()
        ),
    }
    want = {
        "incumbent_vs_goldens": 14,
        "candidate_vs_goldens": 11,
        "candidate_vs_candidate_goldens": 15,
        "incumbent_vs_candidate_goldens": 9,
    }
    for key, value in want.items():
        if got[key] != value:
            raise RuntimeError(f"{key}: {got[key]} != {value}")
    return got


CHECKS_YAML = """\
# The reply spec of seed 002, written from the policy pages, not from either model's output.
checks:
  - id: order_number
    spec: The reply names the order number from the ticket.
    kind: contains_field
    field: order_number
  - id: timeframe_in_policy
    spec: Any timeframe stated appears in the policy document retrieved for that ticket.
    kind: allowed_values
    field: permitted_timeframes
    pattern: '(?:within|in)\\s+(?P<value>\\d+\\s+(?:working\\s+|business\\s+)?days?)'
  - id: remedy_in_policy
    spec: Any remedy offered (replacement, refund, credit) is one the policy permits for that ticket type.
    kind: allowed_values
    field: permitted_remedies
    values:
      replacement: [replacement, replace, new one]
      refund: [refund, money back, reimburse]
      credit: [goodwill credit, store credit, account credit, credit note, voucher]
  - id: no_commitment_date
    spec: The reply does not commit to a delivery date.
    kind: no_commitment_date
  - id: length
    spec: The reply is between 40 and 180 words.
    kind: word_count
    min: 40
    max: 180
  - id: next_step
    spec: The reply ends with a next step the customer or the company will take.
    kind: judge
    rubric: >-
      Pass if the reply ends with a concrete next step that the customer or the company
      will take (an update, a collection, a replacement, a reply to send). Fail otherwise.
    model: gpt-4o-mini-2024-07-18
    provider: openai
    params: {temperature: 0.0, max_tokens: 120, seed: 1}
    inputs: [ticket_text]
  - id: tone
    spec: The tone is right (apologetic where something went wrong, plain, not defensive).
    kind: judge
    rubric: >-
      Pass if the reply apologises for the problem, is plain and courteous, and does not
      blame the customer. Also give a score from 1 to 5 for tone.
    model: gpt-4o-mini-2024-07-18
    provider: openai
    params: {temperature: 0.0, max_tokens: 120, seed: 1}
    inputs: [ticket_text]
    graded: [1, 5]
"""


# The rubric leakage demo (issue 13): checks.yaml plus one criterion that reads like a
# requirement but encodes the incumbent's habit, its two sign-offs (INC_SIGNOFFS), as written
# by somebody who has read the incumbent's replies for a year. Inserted before the judges.
SIGNOFF_CHECK = """\
  - id: sign_off
    spec: The reply closes with a courteous sign-off from the support team.
    kind: regex_required
    pattern: '(?:Kind regards|Best wishes),\\s*(?:The Support Team|Customer Support)\\s*\\Z'
"""
CHECKS_SIGNOFF_YAML = CHECKS_YAML.replace(
    "# The reply spec of seed 002, written from the policy pages, not from either model's output.",
    "# The reply spec of seed 002 plus one criterion written from memory of the incumbent's\n"
    "# replies (sign_off): the rubric leakage demo. checks.yaml is the spec alone.",
).replace("  - id: next_step\n", SIGNOFF_CHECK + "  - id: next_step\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    out: Path = parser.parse_args(argv).out
    tickets, texts = build(np.random.default_rng([SEED, ROLE_STREAM]))
    counts = verify(texts)
    for sub in ("goldens", "goldens_candidate"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    columns = [
        "case_id",
        "slice",
        "order_number",
        "depot",
        "permitted_timeframes",
        "permitted_remedies",
        "ticket_text",
    ]
    write_csv(out / "tickets.csv", columns, ([t[c] for c in columns] for t in tickets))
    replies = []
    for arm in ("incumbent", "candidate"):
        for t in tickets:
            n = int(t["order_number"])
            replies.append((t["case_id"], t["slice"], arm, 0, MODELS[arm], texts[n][arm]))
    write_csv(
        out / "replies.csv", ["case_id", "slice", "arm", "repeat", "model", "output"], replies
    )
    for t in tickets:
        n = int(t["order_number"])
        (out / "goldens" / f"{t['case_id']}.txt").write_bytes(texts[n]["golden"].encode())
        (out / "goldens_candidate" / f"{t['case_id']}.txt").write_bytes(
            texts[n]["golden_candidate"].encode()
        )
    (out / "checks.yaml").write_bytes(CHECKS_YAML.encode())
    (out / "checks_with_signoff.yaml").write_bytes(CHECKS_SIGNOFF_YAML.encode())
    manifest = {
        "generator": "tools/generate_audit_demo.py",
        "seed": SEED,
        "rng": f"numpy.random.default_rng([seed, {ROLE_STREAM}]); ids and outcomes from "
        "generate_demo_data.build_seed002(default_rng([seed, 2]))",
        "seed_file": "002_ae837a85b6e05755.txt",
        "tickets": len(tickets),
        "models": MODELS,
        "exact_match": counts,
        "requirements_mechanical": {"incumbent": 34, "candidate": 36, "cross_tab": "33/1/3/3"},
        "triage": {
            "failures": 29,
            "cosmetic": 27,
            "rephrased": 22,
            "signoff_only": 5,
            "substantive": ["T2288", "T2301"],
        },
        "rubric_leakage": {
            "checks": "checks_with_signoff.yaml",
            "criterion": "sign_off",
            "incumbent": 39,
            "candidate": 11,
            "only_incumbent": 28,
            "only_candidate": 0,
            "flagged": ["sign_off"],
        },
    }
    (out / "MANIFEST.json").write_bytes((json.dumps(manifest, indent=2) + "\n").encode())
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
