"""dpcore.prose: the one home of "a, b and c" in the pages' and the audits' sentences."""

from __future__ import annotations

from dpcore.prose import and_list


def test_lists_read_as_a_sentence_writes_them() -> None:
    assert and_list([]) == ""
    assert and_list(["ADePT"]) == "ADePT"
    assert and_list(["ADePT", "DPText"]) == "ADePT and DPText"
    assert and_list(["ADePT", "DPText", "Copy"]) == "ADePT, DPText and Copy"
    assert and_list(("424", "34,464", "65,536")) == "424, 34,464 and 65,536"  # any sequence
