## Backprop through attention (lessons/backprop-attention.toml: its stops, by phase and recorded name)

lesson-backprop-attention = Backprop through attention
    .summary =
        Follow the gradient through one attention block of a model with grouped-query attention (GQA:
        several query heads share one key/value head): into the weighted sum, through the softmax's Jacobian
        (for one row S[m,i,:] of the scores, the matrix of every ∂Pⱼ/∂Sₖ), into the scores, and out to q, k
        and v, where heads that share a key/value head add their gradients.

lesson-backprop-attention-backward-layers-1-attention_residual =
    .takeaway = A residual add copies the arriving gradient to both of its inputs.
    .narration =
        h = x + attention(RMSNorm(x)): a sum hands its gradient to each term unchanged. So the attention
        block's output receives exactly dL/dh, and the skip hands the same dL/dh to x. x gets a second term
        later, back through attention and RMSNorm: ∂h/∂x = I plus the branch's Jacobian.
    .next = Into the output projection Wo.

lesson-backprop-attention-backward-layers-1-attention-out =
    .takeaway = A linear layer's backward: dX = dY·Wᵀ for the input, dW = Xᵀ·dY for the weight.
    .narration =
        Point at the weight gradient: it has the shape of Wo, and each entry collects evidence from every
        position. The other output, dL/d(concat), is what flows on into the heads.
    .next = Split back into heads: the weighted sum of values.

lesson-backprop-attention-backward-layers-1-attention-heads =
    .takeaway = heads = probs·v, so dL/dprobs = dheads·vᵀ and dL/dv = probsᵀ·dheads.
    .narration =
        Two gradients leave this step. dL/dprobs is one T×T matrix per head; dL/dv has only two heads' worth
        of columns, because the four query heads share two value heads and their gradients add up.
        Forgetting that sum is one of the bug lab's faults (gqa_kv_not_summed): the first backward step
        whose check fails under it is { $gqa-first }, this one.
    .next = dL/dprobs, and what it is for masked keys.
    .mark-0 = kv head 0 = query heads 0 + 1
    .mark-1 = kv head 1 = query heads 2 + 3

lesson-backprop-attention-backward-layers-1-attention-probs =
    .takeaway = dL/dprobs is not zero above the diagonal, yet those keys had probability 0.
    .narration =
        Point at the upper triangle of the arriving gradient: it holds values, because dheads·vᵀ does not
        know about the mask. Then look at dL/dscores beside it: the same triangle is exactly 0. The
        softmax's Jacobian multiplies by p, and p is 0 there.
    .next = That Jacobian, one row at a time.
    .mark-0 = not zero: dheads·vᵀ
    .mark-1 = exactly 0: p = 0 here

lesson-backprop-attention-backward-layers-1-attention-probs-2 =
    .takeaway =
        Softmax backward: dS = Jᵀ·dP = J·dP for each row S[m,i,:], with J = diag(p) − p·pᵀ (p the row of P).
    .narration =
        Scroll to the Jacobian under the figures and click a row of a heatmap: the panel shows J for that
        query, positive on the diagonal and negative off it. J is symmetric, so Jᵀ·dL/dp = J·dL/dp, and it
        matches the recorded dL/dscores, the chain-rule check in green. Each row of J sums to zero, so each
        row of dL/dscores does too: the last query's row of head 0 sums to { FORMAT($rowsum, spec: ".1e") }.
        In practice nobody builds J: dS = p ⊙ (dP − Σ_j′ p_j′·dP_j′), row by row, is the same thing.
    .next = Through the scale 1/√hd into q̃ and k̃.
    .mark-0 = the last query: every key visible

lesson-backprop-attention-backward-layers-1-attention-scores =
    .takeaway =
        S = q̃·k̃ᵀ/√hd (q̃, k̃: the queries and keys after RoPE): dq̃ = dS·k̃/√hd and dk̃ = dSᵀ·q̃/√hd.
    .narration =
        The gradient for k̃ has { $kv_dim } columns, { $n_kv_head } key heads of { $head_dim }, while q̃ has
        { $q_dim }. Each key head's gradient is the sum over the { $kv_group } query heads that read it:
        grouped-query attention's backward for the keys. The bug lab's fault gqa_kv_not_summed forgets the
        same sum for the values, at the weighted sum (the attention.heads step), not here: under it this
        step's check still passes (rel. error { FORMAT($gqa_scores-error, spec: ".1e") }).
    .next = Undo the RoPE rotation.
    .mark-0 = kv head 0: sum of query heads 0 and 1
    .mark-1 = kv head 1: sum of query heads 2 and 3

lesson-backprop-attention-backward-layers-1-attention-q_rot =
    .takeaway = RoPE's backward rotates by the transpose: the same angle, the other way.
    .narration =
        RoPE (rotary position embedding) turns each pair of features of q and k by an angle that grows with
        the position. A rotation is orthogonal, so its backward is its inverse. Compare the arriving
        gradient and the result: same sizes per pair of features, turned back by each position's angle.
    .next = Through the projections Wq, Wk, Wv into the normalized input.

lesson-backprop-attention-backward-layers-1-attention-q =
    .takeaway = Three projections read the same input: their three gradients add up.
    .narration =
        dL/d(attention_norm.out) receives a contribution from q here, and from k and v in the two steps
        before. The walkthrough shows each op's own share; the sum is what RMSNorm's backward reads next.
    .next = Next lesson: find the bug.
    .mark-0 = dWq = nᵀ·dq
