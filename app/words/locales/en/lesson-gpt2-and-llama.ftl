## GPT-2 and Llama: what changes in the backward (lessons/gpt2-and-llama.toml: its stops, by phase and recorded name)

lesson-gpt2-and-llama = GPT-2 and Llama: what changes in the backward
    .summary =
        The GPT-2-style demo model walked where it differs from Llama: LayerNorm instead of RMSNorm, GELU
        instead of SwiGLU, a learned position table instead of RoPE, and biases. Each difference changes one
        rule of the backward pass; each claim is checked against this trace.

lesson-gpt2-and-llama-forward-embedding_positions =
    .takeaway = GPT-2 learns where a token stands: row t of a table P is added to the token's vector, once.
    .narration =
        Llama never adds a position: RoPE rotates q and k inside every attention layer. GPT-2 adds row t of a
        learned table to the embedding here, and from then on position is just more numbers in the residual
        stream. This text has T = { $T } positions, so only the first { $T } of the table's rows are read.
    .next = Next, the norm each block starts with.
    .mark-0 = position 0: token row + P[0]

lesson-gpt2-and-llama-forward-layers-0-attention_norm-out =
    .takeaway = LayerNorm subtracts the mean before it rescales; RMSNorm only rescales.
    .narration =
        x̂ = (x − μ)/σ, then n = x̂·g + β: a gain and a shift per feature (C = { $n_embd }). RMSNorm divides by
        the root mean square and has no β. The extra μ depends on every feature of the position, and that
        will give LayerNorm's backward a term RMSNorm does not have.
    .next = Attention: what is missing without RoPE?

lesson-gpt2-and-llama-forward-layers-0-attention-scores =
    .takeaway = No rotation: S = q·kᵀ/√hd straight from the projections.
    .narration =
        In Llama q and k are rotated by RoPE before this product, so the score of i and j depends on i − j.
        GPT-2's q and k are the projections themselves (hd = { $head_dim }); order reached them only through the
        position table at the start. The shaded band is the causal mask, as in Llama.
    .next = The feed-forward: one matrix in, not two.
    .mark-0 = masked future (j > i)

lesson-gpt2-and-llama-forward-layers-1-feed_forward-gelu =
    .takeaway = GELU: one hidden vector a = n·W1 + b1 goes through g(a) = a·Φ(a); there is no gate.
    .narration =
        SwiGLU multiplies two projections, silu(n·W1) ⊙ (n·W3), so its backward splits the gradient between a
        gate and an up projection. GPT-2's feed-forward is a plain MLP of width F = { $ffn_hidden }: one matrix
        in, GELU, one matrix out. GELU lets small negative inputs through as small negative outputs.
    .next = Now the backward pass, from the top of layer 1.

lesson-gpt2-and-llama-backward-layers-1-feed_forward-out =
    .takeaway = A bias is read at every position, so its gradient is the sum over all N = { $N } rows.
    .narration =
        db2 = Σ dY over the batch, like dW2 sums the outer products of its N rows. Here |db2| = { FORMAT($bias, spec: ".3g") }.
        Keep one row's gradient instead (the bug lab's "bias grad one row") and this very step is the first
        whose check fails ({ $one_row } first, { $one_row-count } failing of { $one_row-of }): the bias
        gradient goes nowhere else, so nothing below it breaks.
    .next = Through the GELU.

lesson-gpt2-and-llama-backward-layers-1-feed_forward-gelu =
    .takeaway = dL/da = dL/dg ⊙ g′(a): one input, one slope per entry.
    .narration =
        SwiGLU's backward has two outputs, dL/da and dL/du, each the arriving gradient times the other factor.
        GELU's has one, and its slope g′(a) = Φ(a) + a·φ(a) dips below zero for a below about −0.75. The
        gradient check passes (relative error { FORMAT($gelu, spec: ".1e") }).
    .next = The LayerNorm before the feed-forward.

lesson-gpt2-and-llama-backward-layers-1-ffn_norm-out =
    .takeaway = LayerNorm's backward has a mean term: dL/dx sums to zero over each position's features.
    .narration =
        dL/dx = r·(dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂)). The −mean(dx̂) comes from μ; RMSNorm's backward has only
        the projection term. So adding one number to every feature of x cannot change the loss, and the
        contribution this step sends to position 5 sums to { FORMAT($row_sum, spec: ".1e") }. Drop the mean term
        and the first failing check is this step, { $no_mean }.
    .next = Attention's backward, without RoPE.

lesson-gpt2-and-llama-backward-layers-0-attention-scores =
    .takeaway = dq and dk go straight to the projections: there is no rotation to undo.
    .narration =
        In Llama the next step back is RoPE's transposed rotation. In GPT-2 dq = dS·k/√hd and dk = dSᵀ·q/√hd
        arrive at the q and k projections directly. The check passes (relative error
        { FORMAT($scores, spec: ".1e") }).
    .next = Last, the position table's gradient.

lesson-gpt2-and-llama-backward-embedding_positions =
    .takeaway = Row t of P receives Σ over the batch of dL/dx[b, t]; rows the batch did not reach get exactly 0.
    .narration =
        RoPE has no parameters, so Llama has no gradient here at all. GPT-2's table learns: row 0 gets a
        gradient of norm { FORMAT($read, spec: ".3g") }, while row 30, past this text's { $T } positions, gets
        { FORMAT($unread, spec: ".3g") }. Only longer texts teach the table's later rows.
