"""Every HTML page ecnlab writes comes from the one jinja2 environment of
``ecnlab.report.page``: ``ecnlab report``'s pages and the catalog's look alike (one base
template: style and the figures' load check) and escape what they show (claims, notes,
parameters and errors are data, never markup)."""

import re

from ecnlab.report.page import environment, fmt, fmt_pm, render
from ecnlab.reproduce import report

HOSTILE = "<script>alert(1)</script>"


def _manifest(**kw):
    m = {"id": "tcn-x", "title": "A <i>title</i>", "paper": "TCN & co", "figures": "Fig. 1", "scale": "quick",
         "seeds": [1, 2], "status": "ran", "command": "ecnlab reproduce tcn-x --out '<store>'",
         "runs": {"total": 2, "ok": 1, "failed": 1, "reused": 0, "run_time_s": 3.4}, "wall_time_s": 5.6,
         "guard": [{"params": {"scheme": HOSTILE}, "key": "k1", "seed": 1, "facts": [HOSTILE, "second fact"]}],
         "failures": [{"params": {"load": 0.9}, "error": HOSTILE}],
         "figures_drawn": [{"name": "fig1", "caption": f"caption {HOSTILE}"}],
         "notes": [f"note {HOSTILE}"], "analysis_notes": []}
    return m | kw


def _claims():
    return [{"experiment": "tcn-x", "id": "a", "claim": "TCN's \"gain\" & more", "paper": 38.7, "ecnlab": 16.04,
             "status": "shown", "note": f"a note {HOSTILE}"},
            {"experiment": "tcn-x", "id": "b", "claim": "timeouts", "paper": "> 2", "ecnlab": 1.5, "status": "not shown",
             "unsound": [f"run {HOSTILE}"], "note": "n"}]


def _scripts(page: str) -> list[str]:
    return re.findall(r"<script>.*?</script>", page, re.S)


def test_catalog_pages_escape_what_they_show(tmp_path):
    page = report.write_report(tmp_path, _manifest(), _claims()).read_text()
    assert "alert(1)</script>" not in page.replace("&lt;/script&gt;", "")
    assert len(_scripts(page)) == 1 and "data-images-loaded" in _scripts(page)[0]  # only the base's load check
    esc = "&lt;script&gt;alert(1)&lt;/script&gt;"
    # the claim's note and unsound baseline, the guard's run and fact, the failed run, the figure's
    # caption (alt and text), the notes
    assert page.count(esc) == 8, page
    assert "A &lt;i&gt;title&lt;/i&gt;" in page and "TCN &amp; co" in page
    assert "TCN&#39;s &#34;gain&#34; &amp; more" in page
    assert "Unsound baseline: run &lt;script&gt;" in page
    assert '<tr class="shown">' in page and '<tr class="notshown">' in page

    index = report.write_index(tmp_path, [_manifest()], _claims(), "cmd <x>",
                               link=lambda m: f'{m["id"]}/report.html"><script>x()</script>').read_text()
    assert len(_scripts(index)) == 1
    assert 'href="tcn-x/report.html&#34;&gt;&lt;script&gt;x()&lt;/script&gt;"' in index
    assert "<code>cmd &lt;x&gt;</code>" in index and index.count(esc) == 2  # the claim's note, its unsound baseline
    assert report.claims_table(_claims()).count(esc) == 2


def test_run_reports_and_catalog_pages_share_one_base(tmp_path):
    env = environment()
    assert env is environment() and env.autoescape is True
    for name in ("report.html.j2", "experiment.html.j2", "index.html.j2"):
        assert env.get_template(name).render(title="t", meta=[], sections=[], m=_manifest(), claims={"rows": []},
                                             counts={}, experiments=[], command="", grid="", guard=[],
                                             figures=[], failures=[], notes=[]).startswith("<!DOCTYPE html>")
    (tmp_path / "run").mkdir()
    run_page = render(tmp_path / "run" / "report.html", title="ecnlab run: x", meta=[f"seed {HOSTILE}"],
                      sections=[{"id": "s", "title": "S", "note": HOSTILE}]).read_text()
    catalog_page = report.write_report(tmp_path, _manifest(), _claims()).read_text()

    def style(page):
        return re.search(r"<style>.*?</style>", page, re.S).group(0)

    assert style(run_page) == style(catalog_page) and ".notshown" in style(run_page)
    assert _scripts(run_page) == _scripts(catalog_page) and len(_scripts(run_page)) == 1
    assert HOSTILE not in run_page


def test_one_number_format_three_significant_digits_integer_part_kept():
    cases = {None: "–", "": "–", float("nan"): "–", True: "yes", "> 2": "> 2", 3: "3", 10**6: "1,000,000",
             2.0: "2", 1234.56: "1,235", 123.456: "123", 12.345: "12.3", 1.5: "1.50", -1.2345: "-1.23",
             0.012345: "0.0123", 0.5: "0.5", 99.96: "100.0"}
    assert {v: fmt(v) for v in cases} == cases
    # a mean over seeds with its 95 % half-width (sweep and advice tables)
    assert [fmt_pm(1234.56, 12.34), fmt_pm(5.0, None), fmt_pm(3.3, float("nan")), fmt_pm(None, 1.0)] == \
        ["1,235 ± 12.3", "5", "3.30", "–"]
