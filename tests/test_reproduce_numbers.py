"""The papers' numbers (ecnlab/reproduce/papers/*.toml) and the reasons that blame a paper
(results/reasons.toml) rest on the papers' own sentences.

The papers are not in the repository. The quotes are (vendored in the tables, each with its
section), and where the papers' texts are at hand (``ECNLAB_PAPERS``, or a ``shared/papers``
folder beside the checkout or one level up, as on the development machines) every quote is
checked to be a verbatim substring (whitespace collapsed); elsewhere that test is skipped
and the tables' form is still checked."""

import os
import re
from pathlib import Path

import pytest

from ecnlab.reproduce import CATALOG
from ecnlab.reproduce.numbers import PAPERS, Number, normalized

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "ecnlab" / "reproduce"


def _papers_dir() -> Path | None:
    candidates = [os.environ.get("ECNLAB_PAPERS")] + [str(p / "shared" / "papers") for p in (ROOT.parent,
                                                                                              ROOT.parent.parent)]
    for c in candidates:
        if c and Path(c).is_dir() and any(Path(c).glob("*.txt")):
            return Path(c)
    return None


def test_every_number_has_its_sentence_section_and_unit():
    for paper, table in PAPERS.items():
        assert table, paper
        for key, n in table.items():
            assert isinstance(n, Number) and n.id == key
            assert n.quote.strip() and n.section.startswith(("§", "Table", "Fig")) and n.unit, (paper, key)
            assert n.at is None or isinstance(n.at, dict) and n.at, (paper, key)


def test_every_claim_reads_a_number_of_the_tables():
    """A claim's number is one of the tables', or computed from them (a ratio of two, a
    "similar" measured by the paper's own "within"), never written in the code."""
    numbers = {id(n) for t in PAPERS.values() for n in t.values()}
    ids = {n.id for t in PAPERS.values() for n in t.values()}
    for exp in CATALOG.values():
        for c in exp.claims:
            assert c.number.quote and c.number.section, (exp.id, c.id)
            if c.number.derived:
                assert set(c.number.derived) <= ids, (exp.id, c.id, c.number.derived)
            else:
                assert id(c.number) in numbers, (exp.id, c.id, "a number not in papers/*.toml")


def test_no_quoted_number_is_written_again_in_the_code():
    """The paper's results are read from the tables: no decimal of them appears as a literal in
    the catalog's code (61.4 in one place and 61.4 again in another could disagree)."""
    code = {p.name: p.read_text() for p in PACKAGE.glob("*.py")}
    assert "tcn.py" in code and "rules.py" in code
    for table in PAPERS.values():
        for n in table.values():
            text = f"{n.value:g}"
            if n.value.is_integer() or len(text.replace(".", "").lstrip("0")) < 3:
                continue  # 2, 0.2, 0.99: too common to be this number (a set-up's 0.2 / m, a percentile)
            lit = re.compile(rf"(?<![\w.]){re.escape(text)}(?![\w.])")
            hits = [name for name, text in code.items() if lit.search(text)]
            assert not hits, (n.id, n.value, hits)


@pytest.fixture(scope="module")
def papers():
    d = _papers_dir()
    if d is None:
        pytest.skip("the papers' texts are not at hand (set ECNLAB_PAPERS to a folder of them)")
    return {p.name: normalized(p.read_text()) for p in d.glob("*.txt")}


def test_every_quote_is_verbatim_in_its_paper(papers):
    for name, table in PAPERS.items():
        for n in table.values():
            assert n.file in papers, (name, n.file)
            assert normalized(n.quote) in papers[n.file], (name, n.id, n.quote)


def test_every_reason_that_blames_a_paper_quotes_it(papers):
    from ecnlab.reproduce.reasons import NEEDS_EVIDENCE, load_reasons

    files = {k: next(iter(t.values())).file for k, t in PAPERS.items()}
    reasons = load_reasons(ROOT / "results")
    assert reasons
    for key, r in reasons.items():
        if r["category"] in NEEDS_EVIDENCE:
            assert r.get("quote") or r.get("absent"), key
        if r.get("quote"):
            assert normalized(r["quote"]) in papers[files[r["paper"]]], (key, r["quote"])
