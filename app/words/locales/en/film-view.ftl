# The film's attention while scrubbing, which gradients build the head, the compare link
# (templates/film.html, static/js/film/frames.js, static/js/film/composition.js; docs/film.md)
film-view-error-no-frames = the recorded run { $name } keeps no attention frames (it was recorded with --attention-frames 0, or before runs kept them): draw a step's attention from its own batch instead
film-view-error-ahead = ahead must be between 1 and { $most } (the steps after step { $step } the run holds, at most 100), got { $value }
film-view-error-family = the split of layer 1's gradient reads RMSNorm'd writes through bias-free projections: a Llama model, not { $family }
film-view-error-replay = step { $step } of the run { $name } replayed here differs from the recorded weights (another machine's arithmetic?): nothing is measured on other weights
film-view-frames-title = Attention while you scrub
film-view-frames-help = Each square is one head's attention on the probe sequence: the first of the sequences the scores are measured on, a segment of { $period } random tokens repeated. A row is a query, its cells the keys it attends to (darker: more attention). The run keeps it at { $frames } steps, more of them where the loss fell fastest; dragging shows the recorded step nearest the scrubbed one, drawn from memory. It is not the step's own batch: for that, use the button below.
film-view-heads = Heads shown
film-view-own-title = The attention on the step's own batch
film-view-no-frames = This run keeps no attention frames: draw a step's attention from its own batch below.
film-view-composition-title = Which gradients build the head
film-view-composition-help = Layer 1's attention reads the residual stream, the sum of what wrote into it: the token embedding, each head of layer 0, layer 0's feed-forward block. So the gradient of layer 1's key weights W_K, and of its query weights W_Q, splits exactly into one part per write. For each part: its share of the whole gradient (the part's projection onto the whole, as a fraction of the whole's length: the shares of all parts add up to 1, and a negative share pulls against the rest), and the cosine between its descent direction and how the weights actually changed over the next steps (1: the same direction, 0: unrelated, −1: the opposite). A large cosine for a previous-token head's part is K-composition being learned: layer 1's keys learning to read what that head wrote. Measuring replays the run from the checkpoint before the step and then the next steps: a few seconds, longer far from a checkpoint.
film-view-ahead = Next steps
film-view-measure = Measure at this step
film-view-compare-title = Compare two steps of the run
film-view-compare-help = Opens the walkthrough of the scrubbed step with the comparison to another step of the run at every op: A, B and B − A. Each step has its own batch, so an activation's difference mixes the weights' change with the batch's; the parameters' gradients and the update compare directly.
film-view-compare-with = Compare with step
film-view-compare-open = Open the comparison
# static/js/film/frames.js
film-view-js-frame = Attention on the probe sequence recorded at step { $frame }, the nearest to step { $step }.
film-view-js-frame-same = Attention on the probe sequence recorded at step { $step }.
film-view-js-head = Attention of layer { $layer }, head { $head } on the probe sequence at step { $frame }
# static/js/film/composition.js
film-view-js-measuring = Measuring at step { $step }: { $replayed ->
        [0] from its checkpoint
        [one] { $replayed } step replayed to reach it
       *[other] { $replayed } steps replayed to reach it
    }, then { $ahead } more…
film-view-js-measured = Step { $step }, layer { $layer }: over the next { $ahead ->
        [one] step
       *[other] { $ahead } steps
    } the summed gradient points where the weights moved with cosine { $summedK } for W_K ({ $summedQ } for W_Q); the step's own gradient alone { $oneK } ({ $oneQ }). Measured in { $seconds } s.
film-view-js-share = share of the gradient
film-view-js-cosine = cosine with the change
film-view-js-write-embedding = embedding
film-view-js-write-head = layer { $layer }, head { $head }
film-view-js-write-previous = previous token { $score }
film-view-js-write-ffn = layer { $layer }, feed-forward
film-view-js-series = { $projection }, summed over the next steps ({ $ahead })
film-view-js-plot = Each write's share of layer { $layer }'s W_K and W_Q gradients at step { $step }, and the cosine of its part with the weights' change over the next { $ahead } steps.
film-view-js-failed = Not measured: { $error }
film-view-js-cached = (kept from an earlier measure)
# static/js/walk/compare.js on a recorded run's step
film-view-js-compare-run-step = another step of this run (type its number)
film-view-js-compare-give-step = Type the step of the run to compare with: a whole number from 0.
film-view-js-compare-side = { $name }: step { $step } of the recorded run { $run }, on its own batch, loss { $loss }
film-view-error-busy = another measure of which gradients build the head is replaying its run (one at a time): retry in { $seconds } s
