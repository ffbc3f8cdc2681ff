"""The periods questions name and the days records are about (``timeframe``): the calendar words a
person uses, resolved the way a reader of the conversation would."""

from __future__ import annotations

from datetime import date

import pytest

from commonkeep.recall.search.timeframe import question_period, record_day, record_spans


def _days(spans: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> list[tuple[str, str]]:
    return [(str(date.fromordinal(a)), str(date.fromordinal(b))) for a, b in spans]


@pytest.mark.parametrize(
    ("question", "spans"),
    [
        ("What did Joanna accomplish in January 2022?", [("2022-01-01", "2022-01-31")]),
        ("What movie did Joanna watch on 1 May, 2022?", [("2022-05-01", "2022-05-01")]),
        ("What happened on May 3rd, 2023?", [("2023-05-03", "2023-05-03")]),
        ("Where was John between August 11 and August 15 2023?", [("2023-08-11", "2023-08-15")]),
        ("Where was Tim in the week before 16 November 2023?", [("2023-11-09", "2023-11-15")]),
        ("Which game did Nate win at the beginning of November 2022?", [("2022-11-01", "2022-11-10")]),
        ("What did they do the Friday before 20 May 2023?", [("2023-05-19", "2023-05-19")]),
        ("What did she read in 2019?", [("2019-01-01", "2019-12-31")]),
        ("What was logged on 2026-12-02?", [("2026-12-02", "2026-12-02")]),
    ],
)
def test_a_question_names_a_period(question: str, spans: list[tuple[str, str]]) -> None:
    period = question_period(question)
    assert period is not None and _days(period.spans) == spans


def test_a_month_without_a_year_is_that_month_of_any_year() -> None:
    period = question_period("Which country was Tim visiting in the second week of November?")
    assert period is not None and (period.spans, period.month, period.days) == ((), 11, (8, 14))
    inside, outside = date(2021, 11, 10).toordinal(), date(2021, 11, 20).toordinal()
    assert period.overlaps([(inside, inside)]) and not period.overlaps([(outside, outside)])


@pytest.mark.parametrize(
    "question",
    ["When did Caroline go to the support group?", "May I ask what she painted?", "What may she like?",
     "How did the march go?", "What did Melanie paint?"],
)
def test_no_period(question: str) -> None:
    assert question_period(question) is None


@pytest.mark.parametrize(
    ("text", "about"),
    [
        ("Yesterday, I went to a fair.", ("2023-04-24", "2023-04-24")),
        ("Last week was wild.", ("2023-04-17", "2023-04-23")),  # the Monday-to-Sunday week before
        ("Last Friday at dance class I felt it.", ("2023-04-21", "2023-04-21")),
        ("We perform next month.", ("2023-05-01", "2023-05-31")),
        ("I painted that sunrise last year.", ("2022-01-01", "2022-12-31")),
        ("I got the tattoo two years ago.", ("2021-01-01", "2021-12-31")),
        ("In March I was ill.", ("2023-03-01", "2023-03-31")),  # the latest March on or before the day
        ("In December I was ill.", ("2022-12-01", "2022-12-31")),
        ("We met on 8 May, 2021.", ("2021-05-08", "2021-05-08")),
    ],
)
def test_a_record_is_about_its_day_and_the_days_it_names(text: str, about: tuple[str, str]) -> None:
    said = date(2023, 4, 25).toordinal()  # a Tuesday
    spans = _days(record_spans(text, said))
    assert spans[0] == ("2023-04-25", "2023-04-25") and about in spans


def test_record_day_reads_created_at() -> None:
    assert record_day("2023-05-08") == date(2023, 5, 8).toordinal()
    assert record_day("2023-05-08T13:56:00+00:00") == date(2023, 5, 8).toordinal()
    for bad in ("", "yesterday", "2023-13-40", None, 20230508):
        assert record_day(bad) is None
    assert record_spans("Yesterday I went out.", None) == []  # no day: relative words point nowhere
