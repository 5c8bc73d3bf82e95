## The loss and the first gradient (lessons/loss-and-first-gradient.toml: its stops, by phase and recorded name)

lesson-loss-and-first-gradient = The loss and the first gradient
    .summary =
        Where training starts: the cross-entropy loss, its mean over N positions, and the first gradient of
        the backward pass, (p − onehot)/N (onehot: 1 at the target, 0 elsewhere), the cheapest formula in
        the whole step and the easiest one to get wrong.

lesson-loss-and-first-gradient-loss-output_probs =
    .takeaway = The model's bet: a probability for every character, at every position.
    .narration =
        Each row adds up to 1. The boxes mark the character that really comes next. The loss only ever looks
        at those boxed cells.
    .next = Take −log of each boxed probability.
    .mark-0 = p(target)

lesson-loss-and-first-gradient-loss-token_loss =
    .takeaway = Per-token loss: −log p(target). Zero for a sure right bet, large for a confident wrong one.
    .narration =
        Point at the tallest bar: the position where the model gave the true next character the least
        probability. A probability of 0.5 costs 0.69, a probability of 0.01 costs 4.6.
    .next = The training loss is the mean of these N numbers.
    .mark-0 = −log p(target) per position; dashed: the mean

lesson-loss-and-first-gradient-loss-loss =
    .takeaway = L is the mean over the N positions: the one number the backward pass differentiates.
    .narration =
        N is the number of positions in the batch, here the characters of the text minus one: N = { $N }.
        Dividing by N makes the loss comparable across batch sizes, and puts a 1/N into every gradient that
        follows.
    .next = Backward starts here: dL/dL = 1.

lesson-loss-and-first-gradient-backward-loss =
    .takeaway = The mean's backward: every per-token loss receives 1/N.
    .narration =
        All the bars have the same height, 1/N = { FORMAT($mean_share, spec: ".4f") }. This is the only
        place the 1/N enters the backward pass: remember it, because the next steps must not add it again.
    .next = Through −log p: the gradient reaches the target probabilities.
    .mark-0 = 1/N, and the same for every position

lesson-loss-and-first-gradient-backward-token_loss =
    .takeaway = dL/dp is −1/(N·p) at the target and 0 everywhere else.
    .narration =
        Point at the boxed cells: they are the only non-zero entries. A target the model found unlikely
        (small p) gets a large push; everything else is not touched by the loss directly.
    .next = The softmax spreads that push over every logit of the row.
    .mark-0 = −1/(N·p): the only non-zeros

lesson-loss-and-first-gradient-backward-output_probs =
    .takeaway = Softmax and cross-entropy together: dL/dlogits = (p − onehot)/N.
    .narration =
        The chart at the bottom puts the recorded gradient beside (p − onehot)/N, where onehot is 1 at the
        target and 0 elsewhere: the bars match, to { FORMAT($same, spec: ".1e") } at worst over every
        position and character. The target's column is p − 1, negative: push that logit up; every other
        logit is pushed down in proportion to its probability.
    .next = Why the hand-written C++ backward pass warns about normalizing twice.
    .mark-0 = (p − 1)/N: the only negative entries
    .mark-1 = recorded dL/dlogits against (p − onehot)/N

lesson-loss-and-first-gradient-backward-output_probs-2 =
    .takeaway = p is already normalized: divide by the softmax denominator once, and by N once.
    .narration =
        The hand-written C++ backward pass this project started from says it in a comment: "a second
        multiplication by inv must NOT be here" (its inv is 1/Σ_w e^(z_w − max z), z the logits: one over
        the softmax's denominator). Dividing by that sum again, or by N a second time, still gives a
        gradient of the right shape and sign, only too small. Two things show it: this step's gradient
        check, and the chart beside it. With the bug lab's fault softmax_ce_normalized_twice the check fails
        (rel. error { FORMAT($twice_check-error, spec: ".2g") }) and dL/dlogits deviates from (p − onehot)/N
        by up to { FORMAT($twice, spec: ".3g") }.
    .next =
        The logits are z = n·Wᵀ, n the final norm's output: the gradient splits between the activations and
        the weights.
    .mark-0 = normalize once: (p − onehot)/N, never more

lesson-loss-and-first-gradient-backward-logits =
    .takeaway = The first weight gradient: with tied embeddings it lands in the embedding table.
    .narration =
        Two contributions leave this step: dL/d(norm.out), which flows on down the network, and the weight
        gradient of the LM head (the last linear layer, one score per character), which goes into
        tok_embeddings because the model ties the two tables. It is a gradient, not yet an update, and every
        character's row receives one, not only the text's: the largest row is { $top-label }'s (norm
        { FORMAT($top-score, spec: ".3f") }), yet l, which the text never uses, gets a larger row
        ({ FORMAT($row_l, spec: ".3f") }) than n ({ FORMAT($row_n, spec: ".3f") }), which it does.
    .next = From here the gradient flows back through every layer: see Backprop through attention.
    .mark-0 = t: a frequent target
