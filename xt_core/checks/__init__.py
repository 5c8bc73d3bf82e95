"""Gradients are verified, never trusted: every check of a recorded step, in float64.

gradcheck.py     one step's checks: directional (every step) and entrywise (small tensors)
directional.py   one directional check and the error measure every check shares
tolerances.py    the named tolerances every check (and the app's warnings) reads
update_check.py  the optimizer update's check, along one direction of all parameters
twin.py          the float64 twin of a step (activations and their gradients) checks read
f64.py           float64 reductions of tensors of any size, without whole-size temporaries
jacobian.py      the softmax Jacobian and the chain-rule check of one row
"""
