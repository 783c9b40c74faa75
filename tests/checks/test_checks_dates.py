"""The no_commitment_date pattern set: dates in many forms, negation, unicode, long replies."""

from __future__ import annotations

import time

import pytest

from evaldelta.checks import commitment_dates

COMMITS = [
    "Your parcel will arrive by Friday.",
    "We'll deliver it on Friday.",
    "It should be with you by Fri.",
    "Expect it no later than Monday.",
    "It will be delivered this Saturday.",
    "We can get it to you next Tuesday.",
    "It arrives Thursday at the latest.",
    "Delivery on 3 March.",
    "It will reach you by 3rd of March 2025.",
    "Expected March 3rd, 2025.",
    "Expected on Mar. 3",
    "Delivery by 03/12.",
    "Delivery by 3/12/2025.",
    "Delivery by 12.03.2025.",
    "Delivery on 2025-03-12.",
    "It will be with you by the 14th.",
    "It will be with you tomorrow.",
    "Tomorrow it will be there.",
    "The day after tomorrow at the latest.",
    "You'll have it by tonight.",
    "It will arrive later today.",
    "It should arrive this weekend.",
    "We'll have it to you by the end of the week.",
    "It will ship next week.",
    "YOU WILL HAVE IT BY FRIDAY",
    "It shipped on Monday and will arrive by Friday.",
    "Don't worry, it will arrive on Monday.",
    "I can't promise it by Friday, but it will arrive by Monday.",
    "Délivrance garantie: it will arrive by Friday 🚚",
    "by\u00a0Friday",  # no-break space
    "by Fri\u200bday",  # zero-width space inside the word
    "by Ｆｒｉｄａｙ",  # full-width letters
    "Delivery by ０３/１２.",  # full-width digits
]

NOT_COMMITS = [
    "",
    "You should have an update within 2 working days.",
    "We'll send a replacement within 5 working days.",
    "Our support team is available 24/7.",
    "The item costs £12.50 and the fee is 3.5%.",
    "Your order #2214 is held at the Manchester depot.",
    "Your order was placed on 3 March.",
    "It was dispatched on Monday.",
    "We have been waiting since Friday.",
    "I can't promise delivery by Friday.",
    "We cannot guarantee it will arrive by Monday.",
    "I'm unable to commit to delivery on 3 March.",
    "We won’t promise a date like tomorrow.",  # curly apostrophe
    "If it hasn't moved by then we'll send a replacement at no cost.",
    "Our office is on the 1st floor.",
    "Version 2.1 of the app fixes this.",
    "Mayday: you may contact us any time.",
]


@pytest.mark.parametrize("text", COMMITS)
def test_commitments_are_found(text: str) -> None:
    assert commitment_dates(text), text


@pytest.mark.parametrize("text", NOT_COMMITS)
def test_non_commitments_pass(text: str) -> None:
    assert commitment_dates(text) == [], text


def test_negated_mentions_count_when_negation_is_not_ignored() -> None:
    text = "I can't promise delivery by Friday."
    assert [m.text for m in commitment_dates(text, ignore_negated=False)] == ["by Friday"]


def test_overlapping_patterns_report_one_match() -> None:
    found = commitment_dates("It will arrive by Friday.")
    assert [m.text for m in found] == ["by Friday"]
    assert found[0].kind == "weekday promise"


def test_every_match_of_a_reply_is_reported_in_order() -> None:
    found = commitment_dates("By Friday, or failing that on 3 March, or tomorrow.")
    assert [m.text for m in found] == ["By Friday", "3 March", "tomorrow"]


def test_very_long_reply_is_fast_and_found() -> None:
    filler = "We are looking into this for you and will keep you updated. " * 20000
    text = filler + "It will arrive by Friday."
    start = time.perf_counter()
    found = commitment_dates(text)
    assert time.perf_counter() - start < 5
    assert [m.text for m in found] == ["by Friday"]
    assert commitment_dates(filler) == []
