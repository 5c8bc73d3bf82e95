## Find the bug (lessons/find-the-bug.toml: its stops, by phase and recorded name)

lesson-find-the-bug = Find the bug
    .summary =
        One backward op has a planted bug, hidden from everyone. Walk back from the loss, read the numbers
        of each step, open up to { $quiz_probes } of the sealed gradient checks, and name the step where the
        gradients first go wrong.

lesson-find-the-bug-backward-loss =
    .takeaway = Debugging a backward pass starts at the loss and walks back, one op at a time.
    .narration =
        Every step has a gradient check: a finite difference of the true loss compared with the gradient the
        code computed. Green means this op's gradient is right. In this quiz every badge stays sealed until
        you answer, and you may open { $quiz_probes } of them: each probe runs one step's check. Our job:
        find the first step, going backward, whose check is red.
    .next = The output softmax and cross-entropy.
    .mark-0 = the badge above the formulas: sealed until you probe it or answer

lesson-find-the-bug-backward-output_probs =
    .takeaway = Compare the recorded gradient with what theory says: (p − onehot)/N.
    .narration =
        The identity chart is a second, independent check for this one step, and it is not sealed. If the
        bars match, the softmax-CE backward is not our bug: with the correct backward they agree to
        { FORMAT($same, spec: ".1e") }.
    .next = The LM head: the last linear layer, one score per character.

lesson-find-the-bug-backward-logits =
    .takeaway = A linear layer: two gradients leave it, both must be right.
    .narration =
        The badge checks this op's two contributions: dL/d(norm.out), which flows on down the network, and
        the weight gradient, which stays here. This LM head shares its matrix with the token table (tied
        weights), so that matrix's gradient has a share from each use. Which of the two would a later step's
        check see?
    .next = Into the last layer's feed-forward block.

lesson-find-the-bug-backward-layers-1-ffn_residual =
    .takeaway =
        A residual add copies its gradient to the skip and the branch: red here means the mistake is here or
        above, nearer the loss.
    .narration =
        x′ = h + FFN(RMSNorm(h)): the figure splits dL/dh into what arrives along the skip and what the
        branch adds. Backward runs from the loss down, so this step runs before the feed-forward block's own
        backward steps and its check cannot see a bug inside the block: under rmsnorm_missing_projection, a
        bug in that block, it passes ({ FORMAT($below-error, spec: ".1e") }). If it is red, the mistake is
        here or above it, nearer the loss: under softmax_ce_normalized_twice it fails
        ({ FORMAT($above-error, spec: ".2g") }).
    .next = The feed-forward block, op by op.

lesson-find-the-bug-backward-layers-1-feed_forward-out =
    .takeaway = The badge is sealed: read the numbers, then decide whether a probe is worth it here.
    .narration =
        Press Compare with the correct backward under the step: it shows how far this step's gradients are
        from the correct ones, without a verdict. If the arriving gradient already differs, the mistake
        happened earlier in the backward pass. A probe opens this step's check: you have { $quiz_probes }
        for the whole quiz.
    .next = The SwiGLU nonlinearity.

lesson-find-the-bug-backward-layers-1-feed_forward-swiglu =
    .takeaway =
        SwiGLU's backward is a product rule: each input's gradient is dout times what the other side gave.
    .narration =
        out = silu(gate)·up, so dup = dout·silu(gate) and dgate = dout·up·silu′(gate), with silu′(g) =
        σ(g)·(1 + g·(1 − σ(g))). Compare with the correct backward and look at which of the two
        contributions differs, or spend a probe on this step's check.
    .next = Up the rest of the layer.

lesson-find-the-bug-backward-layers-1-ffn_norm-out =
    .takeaway =
        RMSNorm divides each row by its own size: its backward has to follow x through the division and
        through rms.
    .narration =
        x̂ is the normalized row x/rms, and rms is computed from x. The chain rule gives dx = (dx̂ −
        x̂·mean(x̂·dx̂))/rms: a gradient that points along x̂ only rescales the row, and that change the
        normalization undoes. Compare with the correct backward; would you spend a probe here?
    .next = Through attention.

lesson-find-the-bug-backward-layers-1-attention-probs =
    .takeaway =
        Each row of probabilities sums to one, whatever the scores: so each row of dL/dscores sums to zero.
    .narration =
        For each row S[m,i,:] of the scores dS = J·dP, with J the softmax's Jacobian (every ∂Pⱼ/∂Sₖ within
        the row; it is symmetric). Adding the same number to every score of a row leaves p unchanged, so the
        gradient's row sums must vanish: with the correct backward the last query's row of head 0 sums to
        { FORMAT($rowsum, spec: ".1e") }. The Jacobian panel under the figures checks one row with the chain
        rule.
    .next = The scores and the 1/√hd scale.

lesson-find-the-bug-backward-layers-1-attention-scores =
    .takeaway = Scores are q̃·k̃ scaled by a constant; the backward carries every constant of the forward.
    .narration =
        A wrong constant factor keeps every sign and every picture right: only the numbers, and the check's
        relative error, tell. Here hd = { $head_dim }, so √hd = { FORMAT($sqrt_head_dim, spec: ".3g") }:
        read a few values against the correct backward before you spend a probe.
    .next = Name the broken step: answer the poll on your screen.

lesson-find-the-bug-backward-embedding =
    .takeaway =
        The last step of the backward pass: every wrong activation gradient upstream ends up here; a wrong
        weight gradient stops where it is made.
    .narration =
        A wrong gradient that flows on down the network turns every later check red too: under
        softmax_ce_normalized_twice { $twice-count } of the { $twice-of } backward checks fail, from
        { $twice-first } on. A wrong weight gradient stops where it is made: under
        tied_embedding_one_contribution only the logits step fails (rel. error
        { FORMAT($tied-error, spec: ".2g") }) and this step's check still passes
        ({ FORMAT($tied_lookup-error, spec: ".1e") }). Either way the first red step going backward is the
        broken one, not the last. Which step did you name?
    .next = The presenter reveals the bug on every screen.
