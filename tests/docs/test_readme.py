"""README.md is the front door: small, and every link in it leads somewhere.

Covered: the README stays under 12 KB; every relative link and image resolves
to a file of the repository, and an anchor, where one is given, to a heading of
that file (GitHub's heading ids); its test command is `make test`, which CI
runs, beside `make demo`; it links into the documentation site's pages, each of
which is in the site's nav.
"""

from __future__ import annotations

import pathlib
import re

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_BYTES = 12 * 1024

# [text](target) and ![alt](target), target without spaces; an optional "title" after it.
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _links(text: str) -> list[str]:
    return _LINK.findall(_FENCE.sub("", text))


def _github_anchor(heading: str) -> str:
    text = re.sub(r"[`*_]|<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: pathlib.Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    headings = re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)
    return {_github_anchor(h) for h in headings}


def _relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)


def test_readme_is_under_12_kb() -> None:
    size = len(README.read_bytes())
    assert size < MAX_BYTES, f"README.md is {size} bytes; move detail into docs/"


@pytest.mark.parametrize("target", [t for t in _links(README.read_text()) if _relative(t)])
def test_every_relative_link_resolves(target: str) -> None:
    path_part, _, anchor = target.partition("#")
    path = (README.parent / path_part).resolve() if path_part else README
    assert path.exists(), f"{target}: no such file"
    assert path.is_relative_to(ROOT), f"{target}: outside the repository"
    if anchor:
        assert path.suffix == ".md", f"{target}: an anchor into a file that is not Markdown"
        assert anchor in _anchors(path), f"{target}: no heading with that id"


def test_readme_keeps_the_two_commands() -> None:
    text = README.read_text()
    assert "make demo" in text
    assert "make test" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_readme_links_into_the_docs_site() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    in_nav = set(re.findall(r"[\w/-]+\.md", str(nav)))
    linked = {
        t.partition("#")[0].removeprefix("docs/")
        for t in _links(README.read_text())
        if t.startswith("docs/")
    }
    assert {"quickstart.md", "install.md", "concepts.md", "reference/policy.md"} <= linked
    assert linked <= in_nav, linked - in_nav


def test_the_link_checker_finds_broken_links(tmp_path: pathlib.Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A title\n\n## Two words `code`\n\n```\n[not](a-link.md)\n```\n")
    assert _links(page.read_text()) == []
    assert _anchors(page) == {"a-title", "two-words-code"}
    assert _links("[a](docs/x.md#y) ![b](img.png) [c](https://example.org)") == [
        "docs/x.md#y",
        "img.png",
        "https://example.org",
    ]
