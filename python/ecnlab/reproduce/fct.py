"""The one factory of the catalog's FCT-versus-load entries (TCN Figs. 6-13, ECN# Figs. 9-14
and 21-22): a set of views (``FctView``: which runs, normalized to which baseline, drawn as
which figure), the claims on them (``fct_claim``: a metric of a scheme against a view's
baseline, "up to X % lower", "within X %", "similar" or a direction), and the entry's own
extra analysis, if any."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .base import ClaimDef, Experiment, NoRunData, Unavailable, register
from .numbers import Number
from .plots import fct_vs_load, style
from .rules import Direction, Fct, Reduction, Within
from .tables import fct_table, quotes_of

METRIC_WORDS = {"fct_small_avg_us": "small-flow avg FCT", "fct_small_p99_us": "small-flow p99 FCT",
                "fct_large_avg_us": "large-flow avg FCT", "fct_all_avg_us": "overall avg FCT"}


@dataclass(frozen=True)
class FctView:
    """The runs whose params equal ``where``, FCT normalized to ``baseline`` over loads; drawn
    as ``figure`` (name, caption, schemes) when given."""

    name: str
    where: dict[str, Any]
    baseline: str
    tag: str
    figure: tuple[str, str, tuple[str, ...]] | None = None

    @property
    def base_label(self) -> str:
        return style(self.baseline)["label"]


def fct_claim(cid: str, number: Number, view: FctView, metric: str, scheme: str, how: str = "reduction") -> ClaimDef:
    """A claim on ``view``: ``scheme``'s ``metric`` against the view's baseline, judged as
    ``how`` says: "reduction" ("up to X % lower", or at the paper's point), "within" ("within
    X %"), "similar" (a ratio of about 1), "direction" (lower, no number)."""
    who, base, what = style(scheme)["label"], view.base_label, METRIC_WORDS[metric]
    if how == "reduction":
        upto = "up to" in number.quote.lower()
        text = f"{view.tag}: {what} {'up to X % ' if upto else ''}lower with {who} than {base}"
        rule = Reduction(Fct(view.name, metric, scheme), upto=upto)
    elif how == "within":
        text, rule = f"{view.tag}: {what} of {who} within X % of {base}", Within(Fct(view.name, metric, scheme, "deviation"))
    elif how == "similar":  # ``number``: a "similar" measured by the paper's "within" (numbers.similar_as)
        text, rule = (f"{view.tag}: {what} of {who} similar to {base} (% off)",
                      Within(Fct(view.name, metric, scheme, "deviation")))
    elif how == "direction":
        text, rule = (f"{view.tag}: {what} lower with {who} than {base} at every load",
                      Direction(Fct(view.name, metric, scheme), over="weakest"))
    else:
        raise ValueError(f"{cid}: how {how!r}")
    return ClaimDef(cid, text, number, rule)


@dataclass
class FctEntry:
    """What an FCT-versus-load entry is made of, before ``build`` turns it into an
    ``Experiment``: its views, claims, and optionally an ``extra(ctx, data)`` analysis (adds
    to the views' data) and ``extra_draw``."""

    id: str
    paper: str
    figures: str
    title: str
    scenario: str
    points: Callable
    views: list[FctView]
    claims: list[ClaimDef]
    notes: list[str] = field(default_factory=list)
    scale_notes: dict[str, str] = field(default_factory=dict)
    extra: Callable[[Any, dict[str, Any]], dict[str, Any]] | None = None
    #: The keys ``extra`` adds (Unavailable when the saved results hold no per-run data).
    extra_keys: tuple[str, ...] = ()
    extra_draw: Callable[[Any, dict[str, Any]], None] | None = None
    series: Callable | None = None
    requires: Callable | None = None


def build(e: FctEntry) -> Experiment:
    views = {v.name: v for v in e.views}
    exp: Experiment | None = None

    def tables(ctx):
        data: dict[str, Any] = {}
        for v in views.values():
            d = ctx.df
            for k, want in v.where.items():
                d = d[d[k] == want] if k in d else d.iloc[0:0]
            if d.empty or v.baseline not in set(d["scheme"]):
                data[v.name] = Unavailable(f"no {v.tag} runs with {v.base_label} at this scale")
                continue
            data[v.name] = fct_table(d, v.baseline, v.base_label, v.tag, quotes_of(exp, v.name))
        if e.extra is not None:
            try:
                data |= e.extra(ctx, data)
            except NoRunData as err:  # the FCT tables stand; what reads a series is not evaluated
                data |= {k: Unavailable(str(err)) for k in e.extra_keys}
        return data

    def draw(ctx, data):
        for v in views.values():
            if v.figure is None or isinstance(data.get(v.name), Unavailable):
                continue
            name, caption, schemes = v.figure
            t = data[v.name]
            mark = ("" if not t.quotes else "; star: the paper's number at its load"
                    if all((q.at or {}).get("load") is not None for q in t.quotes.values())
                    else "; dotted: the paper's best point ('up to X % lower')")
            fct_vs_load(ctx, name, caption + mark, t, list(schemes))
        if e.extra_draw is not None:
            e.extra_draw(ctx, data)

    exp = Experiment(id=e.id, paper=e.paper, figures=e.figures, title=e.title, claims=e.claims, points=e.points,
                     tables=tables, draw=draw, series=e.series, scenario=e.scenario, requires=e.requires,
                     notes=e.notes, scale_notes=e.scale_notes)
    return register(exp)
