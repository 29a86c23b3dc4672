"""The conversion package's public names: what the convert command uses, no more."""

from __future__ import annotations

from loadaware import convert


def test_public_names_are_pinned() -> None:
    assert sorted(convert.__all__) == sorted(
        [
            "Conversion",
            "ConversionIssue",
            "convert_descheduler_policy",
            "load_descheduler_policy",
            "render_conversion_yaml",
            "render_issues_table",
        ]
    )
    for name in convert.__all__:
        assert hasattr(convert, name), name
