"""Optimizers by hand: SGD (with momentum) and AdamW, following torch.optim's update rules
so the two can be compared to round-off. The update is recorded like any other step:
per parameter ΔW, the update/weight RMS ratio, the gradient norm and the optimizer state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field

import numpy as np

from xt_core.training import update_blocks as blocks


def _positive(name: str, value, upper: float = float("inf"), allow_zero: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and np.isfinite(value)
    if not ok or not ((value >= 0) if allow_zero else (value > 0)) or value > upper:
        rule = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a {rule} finite number at most {upper:g}, got {value!r}")


@dataclass(frozen=True)
class SGD:
    """p -= lr * buf, buf = momentum * buf + (g + weight_decay * p) (torch.optim.SGD, no dampening)."""

    lr: float = 0.1
    momentum: float = 0.0
    weight_decay: float = 0.0
    name: str = field(default="sgd", init=False)

    def __post_init__(self):
        _positive("lr", self.lr, 100.0)
        _positive("momentum", self.momentum, 0.999, allow_zero=True)
        _positive("weight_decay", self.weight_decay, 1.0, allow_zero=True)

    def update(self, name: str, p: np.ndarray, g: np.ndarray, state: dict) -> np.ndarray:
        if self.weight_decay:
            g = g + p.dtype.type(self.weight_decay) * p
        if self.momentum:
            buf = state.get("momentum")
            buf = g.copy() if buf is None else p.dtype.type(self.momentum) * buf + g
            state["momentum"] = buf
            g = buf
        return -p.dtype.type(self.lr) * g


@dataclass(frozen=True)
class AdamW:
    """torch.optim.AdamW: decoupled weight decay p *= 1 - lr*wd, then the bias-corrected
    Adam step. Norm gains (1-D parameters) get no weight decay, as usual for Llama."""

    lr: float = 1e-3
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.01
    name: str = field(default="adamw", init=False)

    def __post_init__(self):
        _positive("lr", self.lr, 10.0)
        _positive("beta1", self.beta1, 0.9999, allow_zero=True)
        _positive("beta2", self.beta2, 0.99999, allow_zero=True)
        _positive("eps", self.eps, 1.0)
        _positive("weight_decay", self.weight_decay, 1.0, allow_zero=True)

    def decays(self, p: np.ndarray) -> bool:
        return p.ndim >= 2

    def update(self, name: str, p: np.ndarray, g: np.ndarray, state: dict) -> np.ndarray:
        """The rule above, in place where it can be (a real model's embedding: 28M entries per
        temporary): the same operations in the same order, so the same bits."""
        t = state.get("t", 0) + 1
        b1, b2 = p.dtype.type(self.beta1), p.dtype.type(self.beta2)
        m = np.multiply(1 - b1, g)  # (1 - b1) g, plus b1 m from the state (none before the first step)
        if "m" in state:
            m += b1 * state["m"]
        v = np.multiply(g, g)
        v *= 1 - b2
        if "v" in state:
            v += b2 * state["v"]
        state.update(t=t, m=m, v=v)
        bias1 = 1 - self.beta1**t
        bias2 = 1 - self.beta2**t
        denom = np.sqrt(v)
        denom /= p.dtype.type(np.sqrt(bias2))
        denom += p.dtype.type(self.eps)
        step = np.multiply(-p.dtype.type(self.lr / bias1), m)
        step /= denom
        if self.weight_decay and self.decays(p):
            step -= p.dtype.type(self.lr * self.weight_decay) * p
        return step


OPTIMIZERS = {"sgd": SGD, "adamw": AdamW}


def make_optimizer(spec: dict | None):
    """{"name": "adamw", "lr": 1e-3, ...} -> an optimizer; errors name the field."""
    if spec is None:
        return None
    spec = dict(spec)
    name = spec.pop("name", None)
    if name not in OPTIMIZERS:
        raise ValueError(f'optimizer name must be "sgd" or "adamw", got {name!r}')
    cls = OPTIMIZERS[name]
    known = {k for k in cls.__dataclass_fields__ if k != "name"}
    unknown = sorted(set(spec) - known)
    if unknown:
        raise ValueError(f"unknown {name} field(s): {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    return cls(**spec)


def optimizer_dict(opt) -> dict:
    return asdict(opt)


@dataclass
class ParamUpdate:
    grad_norm: float  # ||g||_2
    weight_rms: float
    update_rms: float
    shape: tuple[int, ...]
    new_nonfinite: int  # NaN or ±inf entries of the updated weights
    _delta: Callable[[], np.ndarray] = field(repr=False)

    @property
    def delta(self) -> np.ndarray:
        """ΔW = W_after - W_before (recomputed on each use when the update does not hold it)."""
        return self._delta()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def update_ratio(self) -> float:
        """RMS(ΔW) / RMS(W): about 1e-3 per step is the usual healthy range."""
        return self.update_rms / self.weight_rms if self.weight_rms > 0 else float("inf")


class PerParam(Mapping):
    """name -> fn(name), computed on each access, nothing held (the update's new weights and
    state; weights moved along a direction for a line search or a gradient check)."""

    def __init__(self, names, fn: Callable[[str], object]):
        self._names, self._fn = list(names), fn

    def __getitem__(self, name: str):
        if name not in self._names:
            raise KeyError(name)
        return self._fn(name)

    def __contains__(self, name) -> bool:  # without building the value
        return name in self._names

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


@dataclass
class Update:
    optimizer: SGD | AdamW
    params: Mapping[str, np.ndarray]  # after the step
    state: Mapping[str, dict]  # per parameter: m, v, t (AdamW) or momentum (SGD), after the step
    per_param: dict[str, ParamUpdate]
    grad_norm: float  # over all parameters
    loss_before: float
    loss_after: float | None = None  # same batch, after the step (filled by the caller)
    held: bool = True  # False: params, state and every ΔW are recomputed on demand, never held
    skipped: bool = False  # a loss scaler skipped it (a gradient overflowed): ΔW = 0, nothing moved

    def nbytes(self) -> int:
        """Bytes of the new weights, ΔW and optimizer state this update holds."""
        if not self.held:
            return 0
        arrays = list(self.params.values()) + [u.delta for u in self.per_param.values()]
        arrays += [v for slot in self.state.values() for v in slot.values() if isinstance(v, np.ndarray)]
        return sum(a.nbytes for a in arrays)


def _rms(a: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(a, dtype=np.float64)))) if a.size else 0.0


def param_step(optimizer, name: str, p: np.ndarray, g: np.ndarray, state: dict) -> tuple[np.ndarray, dict]:
    """(ΔW, the parameter's state after the step); `state` (before) is not modified."""
    slot = dict(state.get(name, {}))
    return optimizer.update(name, p, g, slot), slot


def apply_update(optimizer, params: dict, grads: dict, state: dict | None, loss_before: float, hold: bool = True):
    """One optimizer step; returns new params and state (the inputs are not modified).

    hold=False (a recorded step of a real model, whose new weights, ΔW and AdamW state would be
    3-4 copies of its weights): only each parameter's statistics are kept, made block by block
    (xt_core.training.update_blocks); its ΔW, new value and state are recomputed from the weights,
    gradient and state before the step when asked."""
    state = {k: dict(v) for k, v in (state or {}).items()}
    if not hold:
        return _recomputed_update(optimizer, params, grads, state, loss_before)
    new_params, new_state, per_param = {}, {}, {}
    total = 0.0
    for name, p in params.items():
        g = grads[name]
        delta, slot = param_step(optimizer, name, p, g, state)
        new = p + delta
        norm = float(np.sqrt(np.sum(np.square(g, dtype=np.float64))))
        total += norm * norm
        bad = int(new.size - np.count_nonzero(np.isfinite(new)))
        new_params[name], new_state[name] = new, slot
        per_param[name] = ParamUpdate(norm, _rms(p), _rms(delta), np.shape(p), bad, (lambda d: lambda: d)(delta))
    return Update(optimizer, new_params, new_state, per_param, float(np.sqrt(total)), loss_before)


def _recomputed_update(optimizer, params: dict, grads: dict, state: dict, loss_before: float):
    """apply_update(hold=False): each parameter's ΔW made block by block for its statistics and
    dropped (SmolLM2's AdamW step makes ~10 temporaries of its 113 MB embedding, otherwise)."""
    per_param, total = {}, 0.0
    for name, p in params.items():
        sums = blocks.step_sums(optimizer, name, p, grads[name], state)
        norm = float(np.sqrt(sums.grad_sq))
        total += norm * norm
        size = max(np.size(p), 1)
        weight_rms, update_rms = float(np.sqrt(sums.weight_sq / size)), float(np.sqrt(sums.delta_sq / size))
        recompute = (lambda n: lambda: blocks.stepped(optimizer, n, params, grads, state, plus_weights=False))(name)
        per_param[name] = ParamUpdate(norm, weight_rms, update_rms, np.shape(p), sums.nonfinite, recompute)
    new_params = PerParam(params, lambda n: blocks.stepped(optimizer, n, params, grads, state))
    new_state = PerParam(params, lambda n: param_step(optimizer, n, params[n], grads[n], state)[1])
    return Update(optimizer, new_params, new_state, per_param, float(np.sqrt(total)), loss_before, held=False)
