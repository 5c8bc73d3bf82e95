"""A small recorded run (xt_core/film): the induction task at a few widths, a few dozen steps."""

from xt_core.film.plan import RunPlan

SMALL = {"n_embd": 16, "ffn_hidden": 32, "n_head": 2, "n_kv_head": 2}


def small_plan(**changes) -> RunPlan:
    """24 steps of batch 4, a checkpoint every 8 and 2 where the loss fell fastest, about 0.2 s."""
    settings = dict(steps=24, batch=4, every=8, dense=2, probe_seqs=4, sizes=SMALL, warmup=4, decay="cosine")
    return RunPlan(**(settings | changes))
