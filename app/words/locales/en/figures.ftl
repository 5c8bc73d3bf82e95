# The words inside the figures (app/figures/*) and the figure titles of the step views (app/steps/
# residual.py, loss.py, jacobian.py, output_softmax.py, update.py): hover text, pooling notes, legends,
# panel captions. The notes under a figure and its numbers table are the steps' (steps-figures.ftl).
# A value named $ref or $z is Plotly's placeholder ("%{y}", "%{z:.7g}"): keep it as it is.

## A heatmap drawn in blocks (app/figures/pooling.py, style.py, heads.py)

names-figure-pooled-note = Drawn: { $rows }×{ $cols } values as { $cell_rows }×{ $cell_cols } cells, each cell the entry of largest magnitude in a block of { $block_rows }×{ $block_cols }.
names-figure-grid-note = Downsampled: each head's { $rows }×{ $cols } values are drawn as { $cell_rows }×{ $cell_cols } cells, each the entry of largest magnitude in a { $block_rows }×{ $block_cols } block. Click a head (or its Enlarge button) to see every value.
names-figure-hover-pooled = (largest |value| of its block)
names-figure-hover-block = pooled block of { $rows }×{ $cols } values
names-figure-hover-span = { $title } { $ref } and the next { $more }
names-figure-hover-block-value = { $value } = { $z }, the largest |value| in the block
names-figure-head = head { $head }
names-figure-value = value

## Bars and charts (app/figures/basic.py, app/steps/loss.py)

names-figure-mean = mean = { $mean }
names-figure-loss-title = Loss per position
names-figure-loss-chart-title = Loss per position, −log p(target); dashed: the mean L over all positions
names-figure-loss-value = −log p(target)
names-figure-position-prediction = position: input→target

## The numbers table under a figure (app/figures/serialize.py, app/steps/residual.py)

names-figure-numbers-note = Numbers: { $cut }.
names-figure-cut-one = the first { $part }
names-figure-cut-both = the first { $rows } and { $cols }
names-figure-cut-rows = { $shown } of { $total } rows
names-figure-cut-columns = { $shown } of { $total } columns
names-figure-cut-positions = { $shown } of { $total } positions
names-figure-cut-features = { $shown } of { $total } features

## The residual add's backward (app/figures/panels.py, app/steps/residual.py)

names-figure-residual-title = Gradients add at the skip connection: the gradient of the { $label }
names-figure-residual-skip = arriving along the skip
names-figure-residual-branch = added by the branch
names-figure-residual-sum = sum: the whole gradient
names-figure-residual-sum-short = sum

## The optimizer update's figures of one parameter (app/steps/update.py)

names-figure-update-delta-title = Update ΔW of the { $label }
names-figure-update-grad-title = Gradient g of the { $label }

## A softmax row's Jacobian (app/steps/jacobian.py) and the output softmax's identity (app/steps/output_softmax.py)

names-jacobian-output-where = output softmax, position { $pos } ({ $label })
names-jacobian-attention-where = layer { $layer }, head { $head }, query { $query }
names-jacobian-recorded-logits = dL/dlogits recorded
names-jacobian-recorded-scores = dL/dscores recorded
names-jacobian-token = token { $symbol }
names-jacobian-key = key { $symbol }
names-jacobian-title = Softmax Jacobian J = diag(p) − ppᵀ (symmetric: Jᵀ = J): { $where }
names-jacobian-chain = J·dL/dp (chain rule)
names-jacobian-vectors-title = J·dL/dp against the recorded gradient: { $where }
names-jacobian-gradient = gradient
names-identity-title = The softmax + loss shortcut at position { $pos } (input { $token } → target { $target }): dL/dlogits = (p − onehot)/N, N = { $n }

## The optimizer update step's figures (app/steps/update.py)

names-update-loss-title = Loss on this batch: { $before } before → { $after } after the update
names-update-loss-trained-title = Loss on this batch: { $before } before → { $after } after the update (after { $n } training { $n ->
        [one] step
       *[other] steps
    })
names-update-line-search-title = Line search: loss(W − η·g), W all the parameters, against the first-order prediction loss − η‖g‖²
names-update-grad-norm-title = Gradient norm ‖g‖ per parameter (log scale)
names-update-ratio-title = Update/weight ratio RMS(ΔW)/RMS(W) per parameter (log scale)
names-update-too-large = { $ratio }: too large a step
names-update-expected-label = { $optimizer } at lr { $lr }: { $rule }

## The optimizer update's charts (app/figures/update.py); $x and $y are Plotly's placeholders

names-update-hover-expected = expected up to { $x }
names-update-log-axis = { $value } (log scale)
names-update-parameter = parameter
names-update-steps-before = the { $n } training { $n ->
        [one] step
       *[other] steps
    } before
names-update-hover-step = step { $x }<br>loss = { $y }
names-update-this-step = this step (step { $step }): { $loss }
names-update-hover-this = this step<br>loss = { $y }
names-update-after = after the update, same batch: { $loss }
names-update-hover-after = after the update<br>loss = { $y }
names-update-steps-axis = training step on this batch
names-update-loss-log-axis = loss (log scale)
names-update-measured = loss(W − η·g), measured
names-update-hover-eta-loss = η = { $x }<br>loss = { $y }
names-update-hover-eta-predicted = η = { $x }<br>predicted = { $y }
names-update-first-order = loss − η‖g‖², first-order prediction
names-update-lowest = lowest measured: η = { $eta }
names-update-eta-axis = step size η along −g (log scale)
names-update-loss-axis = loss on this batch

## The bug lab's charts (app/figures/buglab.py); $step, $op, $error and $verdict of the hover are Plotly's placeholders

names-buglab-chart-title = Gradient check of every step: max relative error (log scale)
names-buglab-not-run = NaN: the check could not run
names-buglab-passed = passed
names-buglab-failed = FAILED
names-buglab-hover = step { $step }: { $op }<br>max rel error { $error } ({ $verdict })
names-buglab-error-name = max relative error
names-buglab-phase-forward = forward
names-buglab-phase-loss = loss
names-buglab-phase-backward = backward
names-buglab-phase-update = update
names-buglab-tolerance = tolerance { $tolerance }
names-buglab-first-failing = first failing: step { $step }
names-buglab-step = step
names-buglab-error-axis = max rel error
names-buglab-faulty = faulty backward
names-buglab-correct = correct backward
names-buglab-difference = difference: faulty − correct
names-buglab-identical = 0 everywhere:<br>identical
names-buglab-difference-bar = faulty − correct
# The update step's numbers tables: their columns (app/steps/update.py)
names-update-loss-column = loss
names-update-measured-column = loss(W − η·g)
names-update-first-order-column = loss − η‖g‖²
