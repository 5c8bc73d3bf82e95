"""A quiz's own weights: the spec's weights moved by a seed only the server knows (issue 35).

A quiz is found by checking each op's backward rule against the quiz trace's own numbers, never
by comparing it with a correct trace of the same spec: anyone may build the spec without its
quiz, or rebuild it offline with xt_core. So a quiz trace does not run on the spec's weights but
on weights of its own, drawn from a seed the server derives from its secret and the whole spec
(app.spec.faults.quiz_weights_seed). Built from the public spec, every weight differs, so every
step's values and gradients differ, the arriving gradient of the broken op included: the
comparison cannot tell the broken op from any other.

A random init is drawn again from the secret seed (its own init, the same statistics). A
checkpoint keeps what it learned: each tensor moves by QUIZ_NOISE of its RMS, i.i.d. Gaussian
noise, so the model still does what it was trained for (the find-the-bug lesson's demo model loses
a little of its fit), while a trace of the checkpoint's own weights differs from the quiz's at every
step that reads a weight.

    params = hidden_weights(cfg, params, seed, random_init=spec.checkpoint is None)
"""

from __future__ import annotations

import numpy as np

from xt_core.config import Config
from xt_core.model import init_params

QUIZ_NOISE = (
    0.1  # of each tensor's RMS: the demo text model's loss on the lesson 0.83 -> 1.0-1.2, every gradient 30-90 % away
)


def hidden_weights(cfg: Config, params: dict[str, np.ndarray], seed: int, random_init: bool) -> dict[str, np.ndarray]:
    """New arrays (the checkpoint's, read-only and shared, are never written): a random init drawn
    again from `seed`, or a checkpoint's weights with QUIZ_NOISE of each tensor's RMS added."""
    dtype = next(iter(params.values())).dtype
    if random_init:
        return init_params(cfg, seed=seed % 2**63, dtype=dtype)
    rng = np.random.default_rng(seed)
    moved = {}
    for name in sorted(params):  # a fixed order: the same seed moves each tensor the same way
        weight = params[name]
        rms = float(np.sqrt(np.mean(np.square(weight, dtype=np.float64))))
        noise = rng.standard_normal(weight.shape, dtype=weight.dtype)
        noise *= weight.dtype.type(QUIZ_NOISE * rms)
        noise += weight
        moved[name] = noise
    return moved
