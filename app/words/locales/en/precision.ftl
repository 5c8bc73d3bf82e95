# A low-precision step's spec fields (app/spec/precision.py)
error-precision-low-only = { $field } applies to a bfloat16 or float16 step; this one is { $dtype }
error-precision-loss-scale = loss_scale must be a power of two from 1 to 2^{ $most }, got { $value }
error-precision-not-low = trace { $trace } is a { $dtype } step: the numbers' health compares a bfloat16 or float16 step with its float64 twin (POST its spec with "dtype": "bfloat16" or "float16")

# The update step of a low-precision training step the dynamic loss scaler skipped (app/steps/update.py)
precision-update-skipped = This step's update was skipped: a gradient overflowed { $dtype } at the loss scale 2^{ $exponent }, so the dynamic scaler leaves the weights and the optimizer's state as they were (ΔW = 0) and halves the scale to 2^{ $next } for the next step.

# The gradient check of a bfloat16 or float16 step (static/js/walk/gradcheck_view.js)
js-precision-check-roundoff = This trace is { $dtype } (float32 master weights, each op rounded as the precision table says): the check runs on the same step computed in float64 (same weights, tokens and bugs). The { $dtype } gradient on screen differs from it by { $roundoff } (the format's round-off, not a wrong gradient).
js-precision-check-overflowed = This trace is { $dtype } and its values at this step overflowed to inf or NaN. The same step computed in float64 (same weights, tokens and bugs) checks fine: the backward rule is right, the { $dtype } numbers on screen are not (a loss scale too large, or values past the format's range).
js-precision-check-badge-broken = grad check of { $what } { $verdict } max rel err { $error } (tol { $tolerance }) · the { $dtype } values here are NaN/inf
