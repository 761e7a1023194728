"""Human baselines: annotator accuracy beside the models per subtype, and human response
time against model accuracy per subtype with Pearson and Spearman correlations
(SpinBench Fig. 5b/43). Human records are those of ``human:<annotator>`` models; a
``latency_s`` of None (an interruption) is left out of the response times."""

from __future__ import annotations

import numpy as np
from scipy import stats

from perspecta.report import figures
from perspecta.report.context import Context, Section
from perspecta.report.sections.common import is_baseline, mean_sd, pm
from perspecta.report.summary import block, names
from perspecta.report.tables import DASH, Table, num, pct


def build(ctx: Context) -> Section:
    sec = Section("human", "Human baselines",
                  "All human:* annotators form one Human row: accuracy is the mean ± SD over annotators. "
                  "Model mean accuracy is over the model runs; baseline:* runs (oracle, chance, prior) are left out.")
    if not ctx.human:
        sec.omitted = "no human results (records of model human:<annotator>, from `perspecta human results`)"
        return sec
    subs = sorted({s for h in ctx.human for s in names(h, "subtype")})
    table = Table("human-subtypes", "Human vs model accuracy and human response time per subtype",
                  ["subtype", "annotators", "human acc % (± SD)", "model mean acc %", "human mean RT (s)", "RTs"],
                  sortable=True)
    xs, ys, labels = [], [], []
    for sub in subs:
        accs = [block(h, "subtype", sub)["accuracy"] for h in ctx.human if sub in names(h, "subtype")]
        m, sd = mean_sd(accs)
        model_accs = [r["by_subtype"][sub]["accuracy"] for r in ctx.runs if not is_baseline(r["model"])
                      and sub in r["by_subtype"] and r["by_subtype"][sub]["accuracy"] is not None]
        lat = [h.latency[sub] for h in ctx.human if sub in h.latency]
        total, count = sum(x[0] for x in lat), sum(x[1] for x in lat)
        rt = total / count if count else None
        macc = float(np.mean(model_accs)) if model_accs else None
        table.rows.append([sub, str(len(accs)), pm(m, sd), pct(macc),
                           num(rt, 2), str(count)])
        if rt is not None and macc is not None:
            xs.append(100 * macc)
            ys.append(rt)
            labels.append(sub.split("/", 1)[1])
    sec.blocks.append(table)
    if len(xs) >= 3 and len(set(xs)) > 1 and len(set(ys)) > 1:
        pr, pp = stats.pearsonr(xs, ys)
        sr, sp = stats.spearmanr(xs, ys)
        caption = f"Pearson r = {pr:.3f} (p = {pp:.3g}); Spearman ρ = {sr:.3f} (p = {sp:.3g}); n = {len(xs)} subtypes"
        path, fig = ctx.figure("human-rt-vs-model-accuracy", "Human response time vs model accuracy per subtype "
                               "(SpinBench Fig. 5b/43)", caption)
        figures.scatter(xs, ys, labels, "Human RT vs model accuracy\n" + caption, "mean model accuracy %",
                        "mean human response time (s)", path)
        sec.blocks.append(fig)
    else:
        sec.notes.append("RT vs model accuracy omitted: needs at least 3 subtypes with both human response "
                         "times and model results, with varying values.")
    return sec
