"""report/sentences.py: where a quoted start of a finding's prose ends."""

from gpusleuth.report.sentences import first_sentences


def test_a_sentence_ends_before_a_capital_not_inside_an_abbreviation_or_a_version():
    text = "Move to a supported branch: R580 LTS, e.g. through driver.version 580.95.05. Then restart. (Or wait.)"
    assert first_sentences(text) == "Move to a supported branch: R580 LTS, e.g. through driver.version 580.95.05."
    assert first_sentences(text, 2) == "Move to a supported branch: R580 LTS, e.g. through driver.version 580.95.05. Then restart."
    assert first_sentences(text, 5) == text
    assert first_sentences("  one line without an end  ") == "one line without an end"
