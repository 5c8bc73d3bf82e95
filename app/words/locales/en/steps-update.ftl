# The update step's words (app/steps/update_text.py, update.py): the optimizer's rule, what ΔW
# looks like beside g, the ratio chart and the line search, and its warnings.

step-cos = for { $param } cos(ΔW, g) = { $cos }
step-cos-undefined = for { $param } cos(ΔW, g) is undefined (a zero or non-finite tensor)
step-sgd-decay = g + λW (weight decay λ = { $decay })
step-sgd-momentum = SGD with momentum μ = { $momentum } steps against a running buffer b = μ·b_prev + { $gradient }: ΔW = −η·b. ΔW is −η·g on the first step (b starts as g) and without momentum; later b also carries the gradients of earlier steps, so ΔW need not look like −g ({ $cos }; −1 would be g with its colours inverted, 0 unrelated).
step-sgd-plain = SGD steps against its buffer b: ΔW = −η·b, and without momentum b = { $gradient }, so ΔW is the picture of g with its colours inverted ({ $cos }; −1 is exactly inverted). A parameter with a large gradient takes a large step.
step-sgd-plain-decay = SGD steps against its buffer b: ΔW = −η·b, and without momentum b = { $gradient }, so ΔW is close to the picture of g with its colours inverted while λW is small ({ $cos }; −1 is exactly inverted). A parameter with a large gradient takes a large step.
step-adamw-measured = for { $param } the median |ΔW| is { $median }·η, cos(ΔW, −sign g) = { $sign_cos } and cos(ΔW, g) = { $cos }
step-adamw-first = At this first step m̂ = g and v̂ = g², so, the decay below aside, ΔW = −η·g/(|g| + ε_adam) = −η·sign g wherever |g| is well above ε_adam: every entry moves by η whatever the size of its gradient, and ΔW is the sign of −g rather than −g ({ $measured }).
step-adamw-later = At t = 1 ΔW was −η·sign g, every entry moving by η. Since then m̂ averages the past gradients and v̂ their squares, so |m̂|/√v̂ is 1 for an entry whose gradient stayed the same and mostly less for one whose gradient changed size or sign: |ΔW| ≲ η, often much less, and ΔW need not look like the sign of −g any more ({ $measured }).
step-adamw = AdamW keeps, per entry, a running mean m of the gradient and a running mean v of its square, and moves by η·m̂/(√v̂ + ε_adam) with the bias-corrected m̂ = m/(1 − β₁ᵗ) and v̂ = v/(1 − β₂ᵗ) (ε_adam = { $eps } only keeps the division finite). m and v start at 0, so early on they are too small; the correction divides that out. At this step, t = { $t } (β₁ = { $beta1 }, β₂ = { $beta2 }), a steady gradient would give m̂/√v̂ = ±1 but an uncorrected m/√v = (1 − β₁ᵗ)/√(1 − β₂ᵗ) = { $uncorrected }. { $step } Its weight decay is decoupled: every matrix (not the norm gains) also shrinks by η·λ·W (λ = { $decay }) apart from the gradient. Adding λW to g instead (L2 regularization) would send the decay through m̂/√v̂, which rescales it entry by entry, so entries with large gradients would barely decay.
step-ratio-sgd = The ratio chart shows RMS(ΔW)/RMS(W), how far each parameter moved relative to its size. For SGD it is lr·RMS(b)/RMS(W) with η = lr = { $lr } (the whiskers: lr·RMS(g)/RMS(W)): it follows the gradient, and the classic rule of thumb of about 1e-3 per step is a guide for choosing lr.
step-ratio-sgd-momentum = The ratio chart shows RMS(ΔW)/RMS(W), how far each parameter moved relative to its size. For SGD it is lr·RMS(b)/RMS(W) with η = lr = { $lr } (the whiskers: lr·RMS(g)/RMS(W); at this step, t = { $t } counting this one, momentum makes it at most (1 − μᵗ)/(1 − μ) = { $most } times that when the gradient keeps its direction, and (1 − (−μ)ᵗ)/(1 + μ) = { $fewest } times when it alternates in sign): it follows the gradient, and the classic rule of thumb of about 1e-3 per step is a guide for choosing lr.
step-ratio-adamw = The ratio chart shows RMS(ΔW)/RMS(W), how far each parameter moved relative to its size. AdamW moves every entry by at most about η = lr = { $lr }, so its ratio is about lr/RMS(W), set by lr and the size of the weights rather than by the gradient: the whiskers run from a tenth of lr/RMS(W) (an entry whose gradient keeps changing sign) to lr/RMS(W) (a steady gradient, and every first step).
step-update-common = Beyond { $large } (the dashed line) a single step moves a parameter by a tenth of its size: training is likely unstable. The gradient check covers the gradient the optimizer used, all parameters at once, along one random direction. The line search moves all parameters along −g by η and measures the loss: for small η it follows the first-order prediction loss − η‖g‖² (the gradient's promise, the tangent line); for larger η the curvature (how fast the slope itself changes) bends it back up. Its lowest point is the best plain-SGD step for this one batch.
step-update-trained = Before this step the model took { $steps } training { $steps ->
        [one] step
       *[other] steps
    } on this same batch ({ $optimizer }; the loss curve); this is the next one.

## The update step's warnings

step-update-diverged = The loss after the update is not finite: the step diverged; try a smaller learning rate.
step-update-overshot = The loss went up on this very batch ({ $before } → { $after }): the step overshot; try a smaller learning rate.
step-update-large = { $count } parameter(s) moved by more than { $ratio } of their RMS in one step (largest: { $param }, { $largest }): a learning rate this large is likely unstable.

## The update step's numbers tables

step-table-train-step = step { $step }
step-table-this-step = step { $step } (this one)
step-table-after-update = after the update
step-table-expected-from = expected from
step-table-expected-to = expected to
