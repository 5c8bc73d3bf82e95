# The sentences of an explanation that state this trace's numbers (app/steps/measured.py).

step-loss-not-finite = The training loss is the mean of the per-position losses over all N = B·T = { $n } positions: here L = { $loss }. Guessing uniformly over the V = { $vocab } tokens would score ln V = { $uniform } at every position; this loss is not finite, so the two cannot be compared.
step-loss-uniform = The training loss is the mean of the per-position losses over all N = B·T = { $n } positions: here L = { $loss }. Guessing uniformly over the V = { $vocab } tokens would score ln V = { $uniform } at every position; this model scores about what that uniform guess would.
step-loss-above = The training loss is the mean of the per-position losses over all N = B·T = { $n } positions: here L = { $loss }. Guessing uniformly over the V = { $vocab } tokens would score ln V = { $uniform } at every position; this model scores { $gap } above it: its predictions are not uniform, and where they are confident and wrong they cost more than a uniform guess would.
step-loss-below = The training loss is the mean of the per-position losses over all N = B·T = { $n } positions: here L = { $loss }. Guessing uniformly over the V = { $vocab } tokens would score ln V = { $uniform } at every position; this model scores { $gap } below it: it predicts these targets better than a uniform guess.

## Where a row of a softmax's input gradient sits

step-row-at-head = head { $head }, row { $row }
step-row-at-position = position { $position }
step-row-at-sequence = sequence { $seq }, { $where }

## How far the rows of a softmax's input gradient are from summing to zero

step-row-sums-not-finite = {" "}In this trace { $what } holds NaN or infinite values.
step-row-sums-sealed = {" "}In this trace the largest |row sum| of { $what } is { $largest } ({ $where }, whose entries add up to { $size } in |·|), and the { $dtype } round-off of a row sum (ε_mach·n·M, with ε_mach = { $eps } (the gap between 1 and the next { $dtype }), n = { $n } entries a row and M = { $magnitude } the largest total size of the terms a row adds up) is at most { $roundoff }. Compare the two yourself: the verdict waits for your answer.
step-row-sums-zero = {" "}In this trace the largest |row sum| of { $what } is { $largest } ({ $where }): below { $roundoff }, the { $dtype } round-off of a row sum (ε_mach·n·M, with ε_mach = { $eps } (the gap between 1 and the next { $dtype }), n = { $n } entries a row and M = { $magnitude } the largest total size of the terms a row adds up): zero up to round-off.
step-row-sums-not-zero = {" "}In this trace the largest |row sum| of { $what } is { $largest } ({ $where }, whose entries add up to { $size } in |·|), { $times } times the { $dtype } round-off of such a sum ({ $roundoff }): not zero, so this backward is not the softmax's.

## The output softmax's backward

step-output-facts = Each entry of (p − onehot)/N lies within ±1/N, since 0 ≤ p ≤ 1: here N = { $n }, so 1/N = { $inverse }, and the largest |dL/dlogits| recorded is { $largest }. Each position's row sums to zero, Σ_v (p_v − onehot_v)/N = (1 − 1)/N.{ $row_sums }
step-output-inv-sums = {" "}In this trace that sum ranges from { $low } to { $high } over the positions.

## An induction head's stripe

step-repeat-found = This text repeats: position { $pos } holds the token of position { $earlier }, and row { $pos } of head { $head } puts { $weight } of its weight on position { $after }, the token after it.
step-repeat-none = Type a text that repeats to see its stripe.

## GPT-2 and Qwen
# The numbers of the ops GPT-2 and Qwen add (app/steps/measured_parts.py).

step-row-sums-not-layernorm = {" "}In this trace the largest |row sum| of { $what } is { $largest } ({ $where }, whose entries add up to { $size } in |·|), { $times } times the { $dtype } round-off of such a sum ({ $roundoff }): not zero, so this backward is not LayerNorm's (its mean term is missing or wrong).
step-measured-layernorm-forward = Here the positions' means of x range from { $low } to { $high } and their standard deviations from { $low_std } to { $high_std }; after the norm every x̂ has mean 0 and variance 1 (up to ε), before g and β.
step-measured-positions-forward = This batch has T = { $t } positions, so it reads rows 0..{ $last } of the table's { $rows }.
step-measured-positions-backward = Here B = { $b } { $b ->
        [one] sequence
       *[other] sequences
    } of T = { $t } positions: rows 0..{ $last } each sum { $b } { $b ->
        [one] gradient
       *[other] gradients
    }, and rows { $t }..{ $end } of the { $rows } were not read: their largest |dL/dP| is { $unused }.
step-measured-positions-backward-all = Here B = { $b } { $b ->
        [one] sequence
       *[other] sequences
    } of T = { $t } positions: every row 0..{ $last } of the table sums { $b } { $b ->
        [one] gradient
       *[other] gradients
    }.
step-measured-bias-backward = Here N = B·T = { $n } rows ({ $b } × { $t }) sum into db, whose largest entry is { $largest }.
step-measured-gelu-forward = Here { $share }% of the { $count } pre-activations are negative; GELU's output never goes below about −0.17 (its minimum, at a ≈ −0.75), and the smallest here is { $smallest }.
step-measured-gelu-backward = Here the slope g′(a) ranges from { $low } to { $high } (GELU's own lies between about −0.13 and 1.13: below 0 for a under about −0.75, where g decreases).
step-measured-qk-norm-forward = Here the RMS of the { $heads } heads before the norm ranges from { $low } to { $high } over the positions; after it every head's x̂ has RMS 1 (up to ε).
