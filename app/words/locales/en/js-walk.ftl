# The page's script on the walk page: a step's view (static/js/walk/step_view.js), the timeline,
# the navigation and "jump to" (static/js/walk/timeline.js, navigation.js, jump.js).

js-phase-forward = forward
js-phase-loss = loss
js-phase-backward = backward
js-phase-update = update
js-step-rule-forward = Forward rule
js-step-rule-backward = Backward rule
js-step-rule-update = Update rule
js-step-rule-this = { $rule } · this step
js-step-rules-toggle = Shapes, every formula
    .title = The tensors' shapes, and each rule in full (forward and backward)
js-step-shapes = Shapes
js-step-warning = Warning:
js-step-warnings = Warnings:
js-step-click-row = Click a row to see its softmax Jacobian.
js-step-no-figure = No figure for this step.
js-timeline-step = Step { $number }: { $title } ({ $phase })
js-timeline-group = { $group }, { $phase }: { $steps } { $steps ->
        [one] step
       *[other] steps
    }
js-timeline-group-open = { $group } (click to open)
js-timeline-steps-unit = { $steps ->
        [one] step
       *[other] steps
    }
js-nav-direction-forward = ↓ forward: activations flow down
js-nav-direction-loss = ↓ loss: how wrong were the predictions?
js-nav-direction-backward = ↑ backward: gradients flow up
js-nav-direction-update = parameter update: w ← w − step
js-nav-counter-step = step { $number }
js-nav-counter-of = of { $count }
js-nav-announce = { $step }, of { $count }
js-jump-forward = Forward
js-jump-loss = Loss
js-jump-backward = Backward
js-jump-update = Update
js-jump-op-backward = { $op } — backward
js-training-start = Training { $total } { $total ->
        [one] step
       *[other] steps
    } on this batch, then running the recorded step…
js-training-progress = Training { $done } of { $total } steps ({ $seconds } s)…
js-training-progress-loss = Training { $done } of { $total } steps, loss { $loss } ({ $seconds } s)…
js-training-diverged = NaN/inf (the run diverged)
js-training-trained = trained { $steps } { $steps ->
        [one] step
       *[other] steps
    } on this batch first: loss { $first } → { $loss }
js-training-trained-after = trained { $steps } { $steps ->
        [one] step
       *[other] steps
    } on this batch first: loss { $first } → { $loss }; this step's update takes it to { $after }
js-training-none = no training before this step
js-training-none-after = no training before this step; this step's update takes it to { $after }
js-training-link = training { $steps } steps…
js-training-loading = loading…
js-walk-step-failed = step { $number } could not be loaded: { $error }
js-walk-no-plotly = the plotting library (Plotly.js) did not load; reload the page
js-walk-trace-failed = the training step could not be run: { $error }
js-walk-loss-infinite = NaN or infinite (mean cross-entropy)
js-walk-loss = { $loss } (mean cross-entropy)
js-walk-start-failed = the page failed to start: { $error }
js-error-something = Something went wrong:
js-error-retry = Retry
js-shape-scalar = scalar
js-update-loss = loss on this batch { $before } → { $after }
js-update-norm = ‖g‖ over all parameters { $norm }
js-update-after-training = after { $steps } training { $steps ->
        [one] step
       *[other] steps
    }
js-update-param = { $name } ({ $shape }): ratio { $ratio }
js-update-failed = could not load { $name }: { $error }
js-update-choose = ΔW and gradient of
js-diverged = From step { $number } ({ $name }, { $phase }) on, the values hold NaN/inf: { $advice }. First seen in { $tensor } ({ $count } { $unit }).
js-diverged-values = From step { $number } ({ $name }, { $phase }) on, the values hold NaN/inf: { $advice }. First seen in { $tensor } ({ $count } value(s)).
js-diverged-go = Go to step { $number }
js-diverged-cell = { $step } — NaN/inf first appear here
js-enlarge-loading = Downsampled overview; loading every value of this head…
js-enlarge-failed = Downsampled overview: every value could not be loaded ({ $error }).
js-enlarge-full = Every value of this head: { $rows }×{ $cols }, on its own colour scale.
js-find-no-number = No step { $query }: steps run from 1 to { $count }.
js-find-no-match = No step matches “{ $query }”: try words of a title (“layer 1 softmax”) or a step number.
js-find-placeholder = e.g. layer 1 probs
js-find-label = Find a step
js-jacobian-sealed = The quiz holds back the recorded { $recorded } beside J · dL/dp until you answer: compare them yourself with the step's heatmap above, or spend a probe on this step.
js-jacobian-ok = chain rule ✓
js-jacobian-bad = chain rule ✗
js-jacobian-matches = J · dL/dp matches the recorded { $recorded }: max abs err { $abs }, max rel err { $rel }
js-jacobian-differs = J · dL/dp does NOT match the recorded { $recorded }: max abs err { $abs }, max rel err { $rel }
js-jacobian-recorded = recorded { $gradient }
js-jacobian-difference = difference
js-jacobian-rows-sealed = Row by row: J · dL/dp worked out from p and dL/dp
js-jacobian-rows = Row by row: the chain rule beside the recorded gradient
js-jacobian-numbers = Jacobian check numbers
js-jacobian-key = key
js-jacobian-head = Head
js-jacobian-head-option = head { $head }
js-jacobian-position = Position
js-jacobian-query-position = Query position
js-jacobian-show = Show Jacobian
js-jacobian-heading = Softmax Jacobian of one row
js-jacobian-hint-output = Click a row (a position) of a heatmap above, or choose a position:
js-jacobian-hint = Click a query row of an attention heatmap above, or choose a head and a query position:
js-jacobian-heading-output = Softmax Jacobian at position { $pos }
js-jacobian-heading-row = Softmax Jacobian: layer { $layer }, head { $head }, query position { $pos }
js-jacobian-computing = Computing the Jacobian…
js-figure-plot = { $title } (plot)
js-numbers-axis-sequence = sequence
js-numbers-axis-head = head
js-numbers-axis-kv-head = kv head
js-numbers-axis-position = position
js-numbers-axis-token = token
js-numbers-axis-feature = feature
js-numbers-axis = axis { $axis }
js-numbers-not-finite = not finite
js-numbers-page = rows { $first }–{ $last } of { $rows }, columns { $firstColumn }–{ $lastColumn } of { $columns }
js-numbers-page-at = rows { $first }–{ $last } of { $rows }, columns { $firstColumn }–{ $lastColumn } of { $columns } at [{ $at }]
js-numbers-region = tensor numbers
js-numbers-jump-kind = jump to
js-numbers-jump-row = row
js-numbers-jump-column = column
js-numbers-jump-token = token (rows, then columns)
js-numbers-jump-token-columns = token (columns)
js-numbers-jump-value = row, column or token
js-numbers-copied = copied { $count } values as CSV
js-numbers-previous-rows = previous rows
js-numbers-next-rows = next rows
js-numbers-previous-columns = previous columns
js-numbers-next-columns = next columns
js-numbers-jump = Jump to
js-numbers-go = Go
    .label = jump
js-numbers-copy = Copy CSV
    .label = copy the selected cells (shift-click to extend; none: the page) as CSV
js-keys-next = →  Space  Page Down
    .what = next step; in a lesson, its next stop
js-keys-back = ←  Shift+Space  Page Up
    .what = previous step; in a lesson, its previous stop
js-keys-ends = Home  End
    .what = first and last step
js-keys-present = P
    .what = presenter mode (Esc leaves)
js-keys-blank = B  .
    .what = blank the screen (any key brings it back)
js-keys-help = ?
    .what = this list
js-keys-close = Close
js-keys-title = Keys
js-tokens-position = position { $pos }
js-tokens-pos = pos
js-tokens-input = input
js-tokens-target = target
js-nav-layer = layer { $layer }
