"""One home for the names a sentence uses (issue 58: "headlines use machine ids ('adept',
'dptext', 'santext's')"): every registered mechanism has a human display name in its registry
entry, pages read it from there, and the machine names (CLI, URLs, JSON keys) stay as they were."""

from __future__ import annotations

import pytest

import dpcore.flawed  # registers the flawed reproductions
import dpcore.text  # noqa: F401  (registers the text mechanisms)
from dpcore.mechanisms.registry import VECTOR_MECHANISMS
from dpcore.registry import Registry
from dpcore.text.registry import TEXT_MECHANISMS
from dpcore.validation import DPCoreError

#: The names the headlines use, per machine name.
VECTOR_DISPLAY = {
    "copy": "Copy",
    "random": "Random",
    "laplace": "Laplace",
    "gaussian": "Gaussian",
    "adept-corrected": "corrected ADePT",
    "adept": "ADePT",
    "dpnr": "DPNR",
    "dptext": "DPText",
    "dptext-resample": "resampled DPText",
}
TEXT_DISPLAY = {
    "santext": "SanText",
    "santext+": "SanText+",
    "random": "Random replacement",
    "feyisetan": "CMP",
    "custext": "CusText",
    "custext+": "CusText+",
    "dp-mlm": "dpcore's DP-MLM variant",
    "mahalanobis": "Mahalanobis",
    "tem": "TEM",
    "truncated-gumbel": "Truncated Gumbel",
    "vickrey-cmp": "Vickrey-CMP",
    "vickrey-mahalanobis": "Vickrey-Mahalanobis",
}


@pytest.mark.parametrize(
    ("registry", "want"), [(VECTOR_MECHANISMS, VECTOR_DISPLAY), (TEXT_MECHANISMS, TEXT_DISPLAY)]
)
def test_every_registered_mechanism_has_its_display_name(registry: Registry, want: dict[str, str]) -> None:
    # every registration sets one (a new mechanism without one fails here), and the machine names
    # the CLI, the URLs and the JSON keys use are unchanged
    assert registry.names() == list(want)
    assert {e.name: e.display for e in registry} == want
    assert {n: registry.display_name(n) for n in registry.names()} == want
    # a possessive reads right ("SanText's", "ADePT's"): no display name ends in a bracket or quote
    assert not [d for d in want.values() if d[-1] in ")]'\""]


def test_the_display_name_falls_back_to_the_machine_name_and_refuses_an_unknown_one() -> None:
    reg: Registry = Registry("widget")
    reg.register("plain", summary="no display name")(dict)
    reg.register("fancy", summary="with one", display="Fancy")(dict)
    assert reg.get("plain").display_name == "plain" and reg.display_name("fancy") == "Fancy"
    assert reg.get("fancy").name == "fancy"
    with pytest.raises(DPCoreError, match="unknown widget 'nope'; choose one of: plain, fancy"):
        reg.display_name("nope")
