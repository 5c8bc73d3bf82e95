# The page's script: "Compare with…" under a step (static/js/walk/compare.js).

js-compare-no-text = this trace is given by token ids: another text needs a text
js-compare-type-text = type the other text (as many tokens as this one)
js-compare-no-update = this trace has no update step: start from a spec with an optimizer
js-compare-give-n = give N, the training steps B takes first
js-compare-identical = { $label } of { $name }: identical in A and B
js-compare-difference = { $label } of { $name } ({ $dtypeA } | { $dtypeB }): ‖B − A‖₂/‖A‖₂ = { $rel }, max |B − A| = { $maxAbs } ({ $maxRel } of max |A|)
js-compare-optimizer = { $name } lr { $lr }
js-compare-no-optimizer = no optimizer
js-compare-side = { $name }: { $dtype }, { $optimizer }, { $steps } training steps before, loss { $loss }
js-compare-running = building B and comparing…
js-compare-with = compare with
js-compare-float32 = float32 (this trace is float64)
js-compare-float64 = float64 (this trace is float32)
js-compare-steps = after N training steps
js-compare-other-optimizer = the other optimizer (SGD ↔ AdamW)
js-compare-other-text = another text
js-compare-value = N or the other text
js-compare-start = Compare
js-compare-stop = Stop comparing
js-compare-section = compare with another trace
js-compare-heading = Compare with…
