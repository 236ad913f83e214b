"""Every BENCHMARKS.md section that the code cites exists.

Code comments, docstrings and the documentation pages cite measurements as
`BENCHMARKS.md, "Heading"` (or `BENCHMARKS.md "Heading"`), also across a line break. A cited
heading must be a `##` or `###` heading of BENCHMARKS.md, or its part before a colon or a
parenthesis (so "Multi-class Newton" names "Multi-class Newton: k-column ...", "Parity
tolerances" names "Parity tolerances (what the tests demand ...)").
"""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# (folder, files): the code's comments and docstrings, and the documentation pages
SOURCES = [("dlinear", "*.py"), ("scripts", "*.py"), ("tests", "*.py"),
           ("docs", "*.rst")]
CITATION = re.compile(r'BENCHMARKS\.md,?\s*"([^"]+)"')


def headings(text: str) -> list:
    """The ## and ### headings of a Markdown text, outside ``` blocks."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{2,3} ", line):
            found.append(line.lstrip("#").strip())
    return found


def citations(text: str) -> list:
    """The headings cited in a source text; a line break inside a citation, with the
    comment's '#' at the start of the next line, counts as a space."""
    joined = re.sub(r"\s*\n\s*(#\s*)?", " ", text)
    return CITATION.findall(joined)


def names(heading: str, cited: str) -> bool:
    return heading == cited or heading.startswith((cited + ":", cited + " ("))


def cited_sections() -> list:
    found = []
    for top, pattern in SOURCES:
        for path in sorted((ROOT / top).rglob(pattern)):
            if "_build" in path.parts or "generated" in path.parts:   # Sphinx's output
                continue
            if path == Path(__file__).resolve():      # its examples are not citations
                continue
            for cited in citations(path.read_text()):
                found.append((str(path.relative_to(ROOT)), cited))
    return found


def test_helpers_find_headings_and_citations():
    text = "## Parity tolerances (the tests)\n```\n## not a heading\n```\n### Row order\n"
    assert headings(text) == ["Parity tolerances (the tests)", "Row order"]
    source = '# measured (BENCHMARKS.md,\n# "Row order"); and BENCHMARKS.md "Parity tolerances"'
    assert citations(source) == ["Row order", "Parity tolerances"]
    assert names("Parity tolerances (the tests)", "Parity tolerances")
    assert not names("Parity tolerances (the tests)", "Parity")
    assert not names("Row order", "Row orders")
    assert not names("Row order by class", "Row order")


def test_the_code_cites_benchmark_sections():
    assert len(cited_sections()) >= 10


@pytest.mark.parametrize("where, cited", cited_sections())
def test_every_cited_benchmark_section_exists(where, cited):
    sections = headings((ROOT / "BENCHMARKS.md").read_text())
    assert any(names(h, cited) for h in sections), \
        f'{where} cites BENCHMARKS.md, "{cited}", which has no such section'
