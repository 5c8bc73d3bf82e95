# What a lesson's checked claims say (app/lessons/claims.py): what the lesson claims, what the
# trace measured, and which trace that was. Tensor and step names ($name, $step) are recorded
# names, never translated; FORMAT($x, spec: ".3g") prints a number with Python's format spec and
# the language's decimal separator.

lesson-against-this-trace = this trace
lesson-against-faults = this trace's spec with the fault { $faults }
lesson-against-correct = this trace's spec, correct backward

lesson-phase-forward = forward
lesson-phase-loss = loss
lesson-phase-backward = backward
lesson-phase-update = update

## Bounds and signs: the condition of a value claim

lesson-bound-between = between { FORMAT($low, spec: ".3g") } and { FORMAT($high, spec: ".3g") }
lesson-bound-at-least = at least { FORMAT($low, spec: ".3g") }
lesson-bound-at-most = at most { FORMAT($high, spec: ".3g") }
lesson-sign-positive = positive
lesson-sign-negative = negative
lesson-sign-zero = zero
lesson-condition-both = { $bound } and { $sign }

## Claimed: what the lesson says

lesson-claim-stripe = head { $head } puts at least { FORMAT($weight, spec: ".3g") } on offset { $offset } (key − query) at every query from position { $first } on
lesson-claim-stripe-to = head { $head } puts at least { FORMAT($weight, spec: ".3g") } on offset { $offset } (key − query) at every query from position { $first } to { $last }
lesson-claim-target = p(target) stays above { FORMAT($above, spec: ".3g") } from position { $first } to the end
lesson-claim-target-not-before = p(target) stays above { FORMAT($above, spec: ".3g") } from position { $first } to the end, and not at { $before }
lesson-claim-gradcheck-passes = the gradient check of { $step } ({ $phase }) passes
lesson-claim-gradcheck-fails = the gradient check of { $step } ({ $phase }) fails
lesson-claim-failing-only = the failing backward steps are { $steps }
lesson-claim-failing-none = the failing backward steps are none
lesson-claim-failing-first = the first backward step whose check fails is { $step }
lesson-claim-identity = max |dL/dlogits − (p − onehot)/N| is { $condition }
lesson-claim-entry-value = { $name }{ $at } is { $condition }
lesson-claim-entry-grad = dL/d{ $name }{ $at } is { $condition }
lesson-claim-entry-contribution = this step's contribution to dL/d{ $name }{ $at } is { $condition }
lesson-claim-sum-value = the sum of { $name }{ $at } is { $condition }
lesson-claim-sum-grad = the sum of dL/d{ $name }{ $at } is { $condition }
lesson-claim-sum-contribution = the sum of this step's contribution to dL/d{ $name }{ $at } is { $condition }
lesson-claim-norm-value = the norm of { $name }{ $at } is { $condition }
lesson-claim-norm-grad = the norm of dL/d{ $name }{ $at } is { $condition }
lesson-claim-norm-contribution = the norm of this step's contribution to dL/d{ $name }{ $at } is { $condition }
lesson-claim-max_abs-value = the largest |entry| of { $name }{ $at } is { $condition }
lesson-claim-max_abs-grad = the largest |entry| of dL/d{ $name }{ $at } is { $condition }
lesson-claim-max_abs-contribution = the largest |entry| of this step's contribution to dL/d{ $name }{ $at } is { $condition }
lesson-claim-rows-value = the row of largest norm of { $name }{ $at } is { $label }
lesson-claim-rows-grad = the row of largest norm of dL/d{ $name }{ $at } is { $label }
lesson-claim-rows-contribution = the row of largest norm of this step's contribution to dL/d{ $name }{ $at } is { $label }
lesson-claim-entries-value = the largest entry of { $name }{ $at } is { $label }
lesson-claim-entries-grad = the largest entry of dL/d{ $name }{ $at } is { $label }
lesson-claim-entries-contribution = the largest entry of this step's contribution to dL/d{ $name }{ $at } is { $label }

## Measured: what the trace says

lesson-measured-stripe = least weight { FORMAT($least, spec: ".3g") }, mean { FORMAT($mean, spec: ".3g") }
lesson-measured-target-from = from position { $first } on (at least { FORMAT($least, spec: ".3g") })
lesson-measured-target-from-before = from position { $first } on (at least { FORMAT($least, spec: ".3g") }); before it at most { FORMAT($before, spec: ".3g") }
lesson-measured-target-never = never; before it at most { FORMAT($before, spec: ".3g") }
lesson-measured-gradcheck-passes = it passes: rel. error { FORMAT($error, spec: ".2g") } (tolerance { FORMAT($tolerance, spec: ".0e") })
lesson-measured-gradcheck-fails = it fails: rel. error { FORMAT($error, spec: ".2g") } (tolerance { FORMAT($tolerance, spec: ".0e") })
lesson-measured-failing = failing: { $steps } (first: rel. error { FORMAT($error, spec: ".2g") })
lesson-measured-failing-more = failing: { $steps }, … { $more } more (first: rel. error { FORMAT($error, spec: ".2g") })
lesson-measured-failing-none = failing: none
lesson-measured-first = first failing: { $step }, rel. error { FORMAT($error, spec: ".2g") }
lesson-measured-first-none = first failing: none
lesson-measured-value = it is { FORMAT($value, spec: ".3g") }
lesson-measured-label = it is { $label } ({ FORMAT($score, spec: ".3g") })
