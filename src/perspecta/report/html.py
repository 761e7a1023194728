"""Rendering sections to ``index.html`` (jinja2 template, autoescaped) and ``report.md``."""

from __future__ import annotations

from typing import Any

import jinja2

from perspecta.report.build import block_kind
from perspecta.report.context import Figure, Gallery, Section
from perspecta.report.tables import Table


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("perspecta.report", "templates"),
                             autoescape=jinja2.select_autoescape(["html", "j2"]), trim_blocks=True,
                             lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["kind"] = block_kind
    return env


def _inputs(ctx: Any) -> dict[str, Any]:
    return {"files": [str(f) for f in ctx.files], "n_records": ctx.agg.n_records,
            "dataset": str(ctx.dataset.root) if ctx.dataset is not None else None,
            "runs": [ctx.label(r) for r in ctx.runs] + [h.model for h in ctx.human]}


def render_html(title: str, sections: list[Section], ctx: Any) -> str:
    return _env().get_template("report.html.j2").render(title=title, sections=sections, inputs=_inputs(ctx))


def render_markdown(title: str, sections: list[Section], ctx: Any) -> str:
    inputs = _inputs(ctx)
    out = [f"# {title}", "", f"{inputs['n_records']} scored records from {', '.join(inputs['files'])}; "
           f"runs: {', '.join(inputs['runs'])}.", ""]
    for sec in sections:
        out += [f"## {sec.title}", ""]
        if sec.omitted:
            out += [f"*Section omitted: {sec.omitted}.*", ""]
            continue
        if sec.intro:
            out += [sec.intro, ""]
        for note in sec.notes:
            out += [f"> Note: {note}", ""]
        for b in sec.blocks:
            if isinstance(b, Table):
                out.append(b.to_markdown())
            elif isinstance(b, Figure):
                out += [f"![{b.title}]({b.file})", ""] + ([f"*{b.caption}*", ""] if b.caption else [])
            elif isinstance(b, Gallery):
                for ex in b.examples:
                    out += [f"### {ex['task']} — `{ex['id']}`", ""]
                    out += [f"![{ex['id']}]({img})" for img in ex["images"]] + [""]
                    out += [f"Answer: **{ex['answer']}**", ""]
                    out += ["| run | answer | verdict |", "|---|---|---|"]
                    out += [f"| {r['run']} | {r['prediction']} | {r['verdict']} |" for r in ex["responses"]] + [""]
    return "\n".join(out).rstrip() + "\n"
