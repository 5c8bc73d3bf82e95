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

# The walk page of a bfloat16 or float16 step: each step's panel and the timeline's marks (static/js/walk/precision.js)
# $x and $y in the hover are Plotly's placeholders ("%{x}"): keep them as they are.
js-precision-heading = Numbers in { $dtype }
js-precision-loading = Reading the numbers' health against the float64 twin…
js-precision-failed = The numbers' health could not be read: { $error }
js-precision-op-rounded = { $kind } runs rounded: its inputs are rounded to { $dtype }, it computes in float32 (a matmul's sums too) and rounds its output once. Backward, it reads dL/d its output in { $dtype } and rounds each gradient it makes (an activation's, a weight's) once to { $dtype }.
js-precision-op-float32 = { $kind } is a reduction and runs in float32: it reads its inputs as they come and returns float32. Backward it stays in float32, except the gradient of a { $dtype } input, rounded to { $dtype }.
js-precision-op-update = The update runs on the float32 master weights: ΔW, made from the unscaled float32 gradients, is added to them in float32. Weights held in { $dtype } would lose the share drawn below.
js-precision-table = This step's tensor and its gradient against the float64 twin
js-precision-col-tensor = Tensor
js-precision-col-held = Held in
js-precision-col-error = Rel. error vs float64
js-precision-col-flushed = Flushed to 0
js-precision-col-subnormal = Subnormal
js-precision-col-overflowed = Overflowed
js-precision-col-verdict = Loses information
js-precision-loses = yes
js-precision-keeps = no
js-precision-rule = Steps marked on the timeline lose information in { $dtype }: a relative error against the float64 twin past { $roundoffs } times the format's unit round-off ({ $limit }), more than { $flushed } % of entries flushed to zero where the twin's are not, or any entry overflowed.
js-precision-first = The first to lose it: { $label }.
js-precision-first-none = No step of this trace loses information in { $dtype } by this rule.
js-precision-cell = { $label } · loses information in { $dtype }
js-precision-histogram-title = Exponents of { $name } (held in { $dtype }) beside the formats' ranges
js-precision-histogram-note = Entries counted by ⌊log₂|x|⌋ (zeros and inf left out): green within { $dtype }'s normal range, amber below it (subnormal or flushed), red past its largest number. The bars above: each format's range, subnormal light, normal dark.
js-precision-histogram-hover = 2^{ $x }: { $y } entries
js-precision-histogram-scaled = This gradient is counted as the scaled backward holds it: S·g, S = { $scale } (its share flushed and its error are the same either way).
js-precision-axis-exponent = exponent ⌊log₂|x|⌋
js-precision-axis-count = entries
js-precision-range = { $dtype }: 2^{ $subnormal } … 2^{ $normal } … 2^{ $largest }
js-precision-update-title = Share of each parameter's update lost in { $dtype } weights
js-precision-update-note = ‖ΔW lost‖ / ‖ΔW‖ had ΔW been added to weights held in { $dtype }: an entry smaller than half the format's spacing at its weight vanishes. The float32 master weights keep all of it.
js-precision-update-axis = share of ‖ΔW‖ lost
js-precision-update-text = Added to weights held in { $dtype } instead of float32 master weights, this update would lose up to { $lost } of its norm ({ $param }): why the optimizer keeps a float32 copy.
js-precision-compare-other = the same step in { $dtype }
js-precision-compare-float32 = the same step in float32 (no rounding)

# The home form's loss-scale fields (templates/_precision_fields.html, static/js/home/precision.js)
home-precision-scaling = Loss scaling (bfloat16, float16)
home-precision-loss-scale = Loss scale S
home-precision-loss-scale-help = A power of two, 1 to 2^32: the backward runs on S·L. Blank: 1, no scaling.
home-precision-growth = Growth interval
home-precision-growth-help = The dynamic scaler: double S after this many clean steps (1–100,000), halve it and skip the update on inf/NaN. Blank: a static S.
home-precision-flush = Flush subnormals to zero

# A lesson's claims about a low-precision step (app/lessons/claims.py: precision, first_losing)
lesson-claim-precision-rel_error = the relative error of { $name } against the float64 twin is { $condition }
lesson-claim-precision-flushed = the share of { $name } flushed to zero is { $condition }
lesson-claim-precision-subnormal = the share of { $name } held as subnormal numbers is { $condition }
lesson-claim-precision-overflowed = the share of { $name } overflowed to inf is { $condition }
lesson-claim-first-losing-value = the first tensor of the step to lose information is { $name }
lesson-claim-first-losing-grad = the first tensor of the step to lose information is dL/d{ $name }
lesson-claim-first-losing-none = no tensor of the step loses information
lesson-measured-first-losing-value = the first is { $name }
lesson-measured-first-losing-grad = the first is dL/d{ $name }
lesson-measured-first-losing-none = none does
lesson-against-precision = this trace's spec in { $dtype } at loss scale { $scale }
lesson-against-loss-scale = this trace's spec at loss scale { $scale }
error-precision-quiz = a quiz's numbers' health is not shown: where a gradient overflows or flushes could point at its fault
