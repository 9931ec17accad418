"""The report of the memory_budget study: its README's tables and the notes kept beside them.

Split from :mod:`semiscale_bench.studies.memory_budget` (the measurements in child processes),
which re-exports :func:`render` and :data:`NOTES` and calls :func:`render` at the end of a run.
"""

from __future__ import annotations

from pathlib import Path

#: One-off measurements the README keeps beside the study's own (commands given in the text).
NOTES = [
    "## Before this change, for comparison",
    "",
    "The same child measurement (fresh process, `clear_refs`, VmHWM growth) run on the source of "
    "commit 9f4cc70 (`git archive 9f4cc70 src | tar -x -C /tmp/old`, then the cases with "
    "`PYTHONPATH=/tmp/old/src`), same data:",
    "",
    "| case | budget | outcome then | growth then MiB | growth now MiB |",
    "|---|---|---|---|---|",
    "| Nyström s=2000 | 50MB | refused by the preconditioner after K_ss, T and G | 123.0 | 24.4 "
    "(refused before) |",
    "| Nyström s=2000 | 100MB | fitted (7 iterations) | 158.4 | 24.6 (refused before: needs "
    "125.3 MiB) |",
    "| Nyström s=1000 | 50MB | fitted | 71.2 | 62.1 |",
    "| Nyström s=1000 | 100MB | fitted | 106.9 | 110.2 |",
    "| L^16 (20,000 two-moons points) | none (no parameter) | computed by repeated squaring, "
    "15.1 s | 1042.6 | 699.0 within 1.5GB, 27.0 s; 7.7 (refused) at 100MB |",
    "| L^4 | none | computed | 76.8 | 63.4 within 100MB |",
    "",
    "Issue 11 reported 290 MB of growth for the s=2000 fit at 100 MB (graph search included) "
    "and 1.1 GB for `KNNGraph(power=16)`.",
    "",
    "First touch of fresh memory (`np.empty(n).fill(1.0)`, one process, this machine, memory "
    "not used recently): 1.6 GB 0.82 s, 4 GB 4.6–8.8 s, 8 GB 18.2 s (0.5–2.3 ns per byte); "
    "writing the same arrays again took 0.09–0.3 ns per byte.  Right after other runs had used "
    "the memory (the table above) it was 0.14–0.17 ns per byte.  Issue 11's 26 s fill of an "
    "8.3 GB cache is this cost.  `cache_fill_passes` takes 2 ns per byte, the high end: a large "
    "cache on a fresh machine is what made the eager rule slow.",
    "",
    "The rule (`semiscale.linalg.operators.cache_fill_passes`): the cache costs one pass plus the "
    "first touch, F = 1 + touch/pass passes, and each later pass reads it, ρ = read/pass; "
    "products run without it until their passes reach F/(1 − ρ), then fill it (rent or buy: at "
    "most about twice the kernel time of the better fixed choice, whatever the iteration "
    "count).  With the constants (pass 2 + 0.045·d ns per entry, read 0.08 and touch 2 ns per "
    "byte, all with two threads: within the ranges measured quiet and busy, and the cold first "
    "touch) it buys after 12.5 passes at d = 2 (the 8th product fills the cache), 5.6 at d = 50 "
    "(the 4th) and 1.7 at d = 500 (the 2nd).  On the quiet machine with warm memory of the "
    "table above, filling cost less than one product, so the eager rule won the Gaussian fit "
    "(4.4 s against 6.6 s): the rule's price for not losing 4× on a cold machine.  A first "
    "run of this study under load (products about twice as slow) gave moons 500,000: never "
    "8.1 s, eager 16.7 s, rent-or-buy 8.7 s; Gaussian "
    "200,000: never 23.9 s, eager 11.4 s, rent-or-buy 12.2 s (filled after 4 passes).",
    "",
]


def render(results: dict, out: Path) -> None:
    """Write ``out / "README.md"`` from ``results`` (the parts it holds), then :data:`NOTES`."""
    from semiscale._memory import UNBUDGETED_BASE_BYTES

    # Imported here: the study module imports this one when it loads.
    from semiscale_bench.studies.memory_budget import MODULE, MiB

    lines = [
        "# memory_budget: peak memory of budgeted fits, and when the K_ns cache pays",
        "",
        f"Study module `{MODULE}` (its docstring describes the method), on "
        f"{results['machine']}; raw numbers in `results.json`.",
        "",
    ]

    def produced(part):
        r = results[part]
        if r.get("load_average"):
            load = ", ".join(f"{x:.1f}" for x in r["load_average"])
        else:
            load = "not recorded"
        return [
            f"Produced by `{r['command']}` on {r['date']} (load average at start and end: "
            f"{load}; the machine was shared, so seconds are indicative).",
            "",
        ]

    if "rss" in results:
        sizes = results["rss"]["sizes"]
        lines += [
            "## Peak RSS growth against the budget",
            "",
            *produced("rss"),
            "A fresh process per case; growth = peak RSS (`VmHWM`) after the case minus the "
            "RSS after loading the data (the peak reset there with `/proc/self/clear_refs`; "
            "`ru_maxrss` of a child includes its parent's peak, see the module docstring).  "
            "The documented constant "
            "(`semiscale._memory.unbudgeted_bytes`) is "
            f"{UNBUDGETED_BASE_BYTES // MiB} MiB + one copy of X + three copies of the "
            "Laplacian + 8·n·(r + 1) floats; PASS when growth ≤ budget + constant, and for a "
            "refusal when growth ≤ constant (refused before the budgeted allocations).",
            "",
            f"Nyström cases: `NystromLapRLSRegressor(n_centers=s, memory_budget=...)`, default "
            f"kernel and preconditioner, n = {sizes['n']:,}, d = {sizes['d']}, 1 % labeled, the "
            f"kNN Laplacian given ({sizes['laplacian_nnz']:,} non-zeros), `n_jobs=1`.  Power "
            f"cases: `laplacian(W, power=p, memory_budget=...)` on the 8-NN graph of "
            f"{sizes['moons_n']:,} two-moons points (what `KNNGraph(power=p)` computes).",
            "",
            "| case | budget | outcome | growth MiB | constant MiB | limit MiB "
            "| verdict | seconds | notes |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for r in results["rss"]["cases"]:
            what = f"Nyström s={r['n_centers']}" if r["kind"] == "nystrom" else f"L^{r['power']}"
            note = ""
            if r["outcome"] == "fitted":
                filled = "filled" if r["cache_filled"] else "not filled"
                note = f"{r['iterations']} PCG iterations, cache {filled}"
            elif r["outcome"] == "computed":
                note = f"{r['nnz']:,} non-zeros"
            else:
                note = r["message"].replace("|", "/")
            lines.append(
                f"| {what} | {r['budget']} | {r['outcome']} | {r['growth'] / MiB:.1f} | "
                f"{r['constant_bytes'] / MiB:.1f} | "
                f"{r['limit_bytes'] / MiB:.1f} | {r['verdict']} | "
                f"{r['seconds']:.1f} | {note} |"
            )
        lines.append("")
    if "cache" in results:
        c = results["cache"]
        lines += [
            "## When the K_ns cache pays",
            "",
            *produced("cache"),
            f"One process per row, `n_jobs={c['n_jobs']}`, s = 1,000 centers, medians of 3: "
            "one product `H V` (two kernel passes) without and with the stored K_ns, filling "
            "it (one pass into fresh memory), and touching that much fresh memory alone.",
            "",
            "| n | d | cache | uncached product s | cached product s | fill s | first touch s "
            "| pass ns/entry | read ns/byte | touch ns/byte | break-even products |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for p in c["products"]:
            lines.append(
                f"| {p['n']:,} | {p['d']} | {p['cache_bytes'] / 1024**3:.2f} GiB | "
                f"{p['uncached_product_s']:.3f} | {p['cached_product_s']:.3f} | "
                f"{p['fill_s']:.2f} | {p['first_touch_s']:.2f} | {p['pass_ns_per_entry']:.2f} | "
                f"{p['read_ns_per_byte']:.3f} | {p['touch_ns_per_byte']:.2f} | "
                f"{p['break_even_products']:.1f} |"
            )
        lines += [
            "",
            "Whole fits (PCG with the sampled-Hessian preconditioner, 1,000 labeled points all "
            "among the s = 1,000 centers, budget 32 GB so that the cache always fits) under "
            "the three policies: never (`False`), at the first product (`True`, the rule "
            "before), and the rent-or-buy default (`auto`); medians of 3 rounds over the "
            "policies.  Iterations differ between policies because a cacheable K_ns makes "
            "the sampled-Hessian preconditioner take s/8 graph rows instead of s/4.",
            "",
            "| data | n | policy | seconds | PCG iterations | cache filled | uncached passes |",
            "|---|---|---|---|---|---|---|",
        ]
        for f in c["fits"]:
            lines.append(
                f"| {f['data']} | {f['n']:,} | {f['policy']} | {f['seconds']:.1f} | "
                f"{f['iterations']} | {f['cache_filled']} | {f['uncached_passes']:.2f} |"
            )
        lines.append("")
    lines += NOTES
    (out / "README.md").write_text("\n".join(lines))
