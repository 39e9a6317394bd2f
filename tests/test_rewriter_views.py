"""The shipped rewriter views are what their commands compute (the dashboard opens with them)."""

from __future__ import annotations

import json

from dpcore.cli import main
from dpcore.rewriter import views


def test_the_shipped_stopword_view_is_current_and_its_command_prints_it(capsys) -> None:
    settings = views.VIEWS["stopwords"]
    shipped = views.shipped_view(settings)
    assert shipped is not None and shipped["verdict"] == "violates"
    argv = [*views.view_command(settings)[3:], "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    printed.pop("seconds")
    assert printed == shipped


def test_both_views_are_shipped_with_their_settings_and_verdicts() -> None:
    data = json.loads(views.SHIPPED_PATH.read_text(encoding="utf-8"))["views"]
    assert set(data) == set(views.VIEWS)
    for key, entry in data.items():
        assert entry["settings"] == views.VIEWS[key]
        assert entry["command"] == views.view_command(views.VIEWS[key])
    assert data["dp-mlm"]["result"]["verdict"] == "not-detected"
    p = data["stopwords"]["result"]["pairs"][0]
    assert p["lower_bound"] > p["claimed_bound"] == 1.75
    assert "'was'" in p["event"]


def test_other_settings_have_no_shipped_view() -> None:
    other = {**views.VIEWS["stopwords"], "seed": 1}
    assert views.find_view(other) is None and views.shipped_view(other) is None
    assert views.find_view(views.VIEWS["dp-mlm"]) == "dp-mlm"
