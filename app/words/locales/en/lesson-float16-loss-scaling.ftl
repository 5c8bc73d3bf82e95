## Why float16 needs loss scaling (lessons/float16-loss-scaling.toml: its stops, by phase and recorded name)

lesson-float16-loss-scaling = Why float16 needs loss scaling (and bfloat16 does not)
    .summary =
        The same step in float16, with float32 master weights and each op rounded as mixed-precision training
        rounds it. The forward is fine; the backward's gradients are small, and float16's range ends at 2^-24:
        watch them turn subnormal, then flush to zero, then see what a loss scale of 2^8 restores and why
        bfloat16, with float32's range, needs none.

lesson-float16-loss-scaling-forward-logits =
    .takeaway = The forward in float16 loses nothing that matters: the logits sit well inside its range.
    .narration =
        Every op here rounded its inputs and its output to float16 (10 fraction bits, about 3 decimal digits),
        yet the logits differ from the float64 twin's by { FORMAT($fwd, spec: ".1e") } relative: within ten unit
        round-offs of float16. Activations are of order 1, where float16 is at home.
    .next = The loss itself is a reduction: it runs in float32.

lesson-float16-loss-scaling-loss-loss =
    .takeaway = The softmax, the cross-entropy and its mean run in float32: the loss is as good as the logits.
    .narration =
        Reductions (softmax, the norms, the loss) are kept in float32 by every mixed-precision recipe: they sum
        many small terms. The loss differs from the twin's by { FORMAT($loss_error, spec: ".1e") } relative. The
        trouble starts on the way back.
    .next = The first gradient: (p − onehot)/N, divided by N = { $N }.

lesson-float16-loss-scaling-backward-output_probs =
    .takeaway = dL/dlogits = (p − onehot)/N is already small: many entries are subnormal in float16.
    .narration =
        Each entry is a probability divided by N = { $N }, and most probabilities are tiny. float16's normal
        numbers stop at 2^-14 ≈ 6.1e-5; below it, down to 2^-24 ≈ 6e-8, it keeps fewer and fewer bits (subnormal
        numbers). Here { FORMAT($dlogits-percent, spec: ".0f") } % of dL/dlogits are subnormal, none flushed to
        zero yet. Open the panel under the figures: the histogram's amber bars are below float16's normal range.
    .next = Through the LM head and the last layer, gradients shrink further.

lesson-float16-loss-scaling-backward-layers-1-feed_forward-gate =
    .takeaway = Inside the last layer most gradient entries are subnormal, and the first ones are flushed to zero.
    .narration =
        dL/dgate of layer 1: { FORMAT($gate_sub-percent, spec: ".0f") } % of its entries are subnormal and
        { FORMAT($gate_zero-percent, spec: ".2f") } % became exactly 0 where the float64 twin's are not. A zero
        gradient is no small gradient: that entry's weights learn nothing from this step.
    .next = The attention scores' gradient: the first tensor past the rule.

lesson-float16-loss-scaling-backward-layers-1-attention-scores =
    .takeaway = The first tensor to lose information: dL/dscores of layer 1, with more than 1 % of it flushed to zero.
    .narration =
        The rule marks a step where the relative error passes ten unit round-offs or more than 1 % of entries
        flush to zero. Walking the step in its order, the first to do so is { $first }'s gradient:
        { FORMAT($zeros-percent, spec: ".2f") } % of its entries are 0 that should not be, and
        { FORMAT($first-subnormal, spec: ".0f") } % are subnormal. The timeline marks this step in amber.
    .next = The same step again, with the loss multiplied by 2^8 before the backward.

lesson-float16-loss-scaling-backward-layers-1-attention-scores-2 =
    .takeaway = A loss scale of 2^8 lifts every gradient 8 binades into float16's range; the update divides it out.
    .narration =
        Loss scaling runs the backward on S·L: every gradient is S times larger, exactly, since S = 2^8 is a power
        of two. At the same step the flushed share drops to { FORMAT($scaled_zeros-percent, spec: ".2f") } % and the
        subnormal share to { FORMAT($scaled_sub-percent, spec: ".1f") } %; no tensor of that step loses information
        any more. Before the update the gradients are divided by S again, in float32.
    .next = Deeper in the backward, the same story.

lesson-float16-loss-scaling-backward-layers-0-feed_forward-gate =
    .takeaway = The first layer's gradients: { FORMAT($deep_sub-percent, spec: ".0f") } % subnormal without scaling, { FORMAT($deep_scaled-percent, spec: ".1f") } % with 2^8.
    .narration =
        Gradients keep their size roughly from layer to layer here, but sit a few binades below 1/N. Without a
        scale { FORMAT($deep_sub-percent, spec: ".0f") } % of dL/dgate in layer 0 are subnormal, keeping only a few
        significant bits; at S = 2^8 only { FORMAT($deep_scaled-percent, spec: ".1f") } % are. Too large an S
        overflows the other way: a gradient past 65,504 becomes inf, and the dynamic scaler halves S and skips
        that step.
    .next = And bfloat16?

lesson-float16-loss-scaling-backward-embedding =
    .takeaway = bfloat16 has float32's exponent range: nothing flushes, no scale needed; it pays in precision instead.
    .narration =
        bfloat16 keeps float32's 8 exponent bits and only 7 fraction bits. The same step in bfloat16, unscaled:
        { FORMAT($bf16_zeros-percent, spec: ".0f") } % of dL/dscores flushed and no tensor past the rule. But every
        rounding is 8 times coarser: the embedding's gradient is off by { FORMAT($bf16_error, spec: ".1e") } relative,
        against { FORMAT($fp16_error, spec: ".1e") } in float16. float16 needs a loss scale for its range; bfloat16
        trades that range problem for fewer digits.
