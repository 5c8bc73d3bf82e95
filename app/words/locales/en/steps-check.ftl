# A step's failed gradient check and its NaN/inf warnings (app/steps/gradcheck.py, view.py,
# update.py, nonfinite.py).

step-check-failed = The gradient check failed: relative error { $error } exceeds the float64 tolerance { $tolerance }.
step-check-failed-twin = The gradient check failed: relative error { $error } exceeds the float64 tolerance { $tolerance } (the check runs on this trace's float64 twin).
step-check-fault-hint = {" "}The bug-lab fault changed the backward pass: the optimizer stepped along a wrong gradient.

## NaN and ±inf in what a step shows

step-nonfinite-values = { $tensor } holds { $count } NaN or infinite value(s), drawn as gaps and sent as null.
step-nonfinite-gradient = dL/d({ $tensor })
step-nonfinite-contribution = the contribution to dL/d({ $tensor })
step-nonfinite-updated = The updated weights hold NaN or infinite values ({ $names }): the step diverged.
step-nonfinite-updated-more = The updated weights hold NaN or infinite values ({ $names } and { $more } more): the step diverged.
step-nonfinite-overflow = The mean square of { $tensor } overflowed { $dtype } in { $rows } row(s) (values up to { $biggest }): 1/rms became 0, so this RMSNorm outputs 0 there and no gradient flows back. The run diverged.

## The divergence banner (the trace summary's first_nonfinite)

step-diverged-training = the run diverged during training (its loss is NaN/inf from training step { $step } of { $steps } on) — try a smaller learning rate
step-diverged = the run diverged — try a smaller learning rate
step-overflowed = the values overflowed the { $dtype } range — try float64, or smaller weights
step-overflowed-tensor = { $tensor } (its mean square)
step-unit-values = value(s)
step-unit-rows = row(s) overflowed
step-nonfinite-updated-tensor = the updated { $tensor }
