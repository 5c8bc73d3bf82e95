# A step's explanation (app/steps/explain.py): one message per kind of op and phase, and the
# sentences they hold ($gqa, $tied, $stream, $other, $extra: each a whole sentence or none).

step-explain-unknown = { $kind } ({ $phase }).

## Forward

step-explain-forward-embedding = Each input token id picks one row of the embedding table tok_embeddings E (V×C); that row is the token's starting vector x in the residual stream. It is a lookup, not arithmetic: positions holding the same token start with identical vectors, and position only enters later, through RoPE.
step-explain-forward-rmsnorm = RMSNorm rescales each position's vector to unit root-mean-square, r = 1/√(mean(x²)+ε), n = r·x ⊙ g, with a learned gain g per feature. It keeps the scale of what { $reader } reads steady however large the residual stream grows; unlike LayerNorm it does not subtract the mean. { $stream }
step-explain-forward-linear = A matrix product Y = X·W with W stored (in, out), the same for every position: it computes { $role }. Each output feature is a weighted sum of the input features of the same position; nothing mixes positions here.
step-explain-forward-rope = RoPE rotates every pair of features (2c, 2c+1) of every head by the angle φ = t·θ^(−2c/hd), where t is the position, hd = { $hd } the head width and θ = { $theta } RoPE's base (the model's rope_theta). The rotated queries and keys are q̃ and k̃. After rotating both queries and keys, the dot product of a query at position i with a key at position j depends on their contents and on the offset i − j only: that is how attention learns about order. Values are not rotated.
step-explain-forward-scores = Every query is compared with every key by a dot product, S = q̃·k̃ᵀ/√hd (q̃, k̃: the queries and keys after RoPE), one T×T matrix per head m; the scale 1/√hd keeps the spread of the scores from growing with the head width (which would saturate the softmax). Keys in the future (j > i) are set to −∞, the causal mask: a position must not see the token it is asked to predict. Masked cells are drawn blank. This is the first op where positions meet: query i is paired with every key j ≤ i.{ $gqa }
step-explain-forward-softmax-attention = Each row of scores S becomes a probability distribution P over the keys that row may see: subtract the row's maximum (for numerical safety, it changes nothing), exponentiate, divide by the sum. Masked keys get exactly 0. Row i says how much position i takes from each position j ≤ i, itself included.
step-explain-forward-softmax-output = The logits of each position become a probability distribution p over the V tokens of the vocabulary: the model's prediction of the next token. Subtracting the row maximum first keeps exp from overflowing and changes nothing.
step-explain-forward-attend = Each head's output at position i is the average of the value vectors of positions 0..i, weighted by row i of that head's attention probabilities P. The scores paired each query with the keys; here the values of those positions are mixed into position i. Every op of the layer except these two works on each position alone.{ $gqa }
step-explain-forward-merge-heads = The H head outputs, hd features each, are placed side by side into one vector of H·hd features per position: a pure re-layout, no arithmetic.
step-explain-forward-residual = The branch's output is added to the residual stream, not substituted for it: { $sum }. The stream carries the embedding forward plus whatever each sublayer writes into it, which also gives the gradient a direct path back.
step-explain-forward-swiglu = SwiGLU: the gate a = n·W1 goes through silu(a) = a·σ(a) and multiplies the up projection u = n·W3 feature by feature, s = silu(a) ⊙ u. The gate decides, per position and hidden feature, how much of u passes.
step-explain-forward-unembed = The LM head: the final normalized vector n of each position is compared with every token's row of { $weight }, logits = n·Wᵀ, one score per vocabulary token.{ $tied }
step-explain-forward-token-loss = The loss of one position is −log of the probability the model gave to the correct next token (the target): 0 for a certain right answer, large for a confident wrong one. The bars show it per position.
step-explain-forward-mean = { $loss_sentence }

## Backward

step-explain-backward-embedding = Each position's gradient flows back to the row of the embedding table its token selected. A token used at several positions receives the sum (np.add.at; fancy-index assignment would keep only the last one).{ $tied }
step-explain-backward-rmsnorm = dL/dg = Σ dL/dn ⊙ x̂ over all positions. For the input, dL/dx = r·(dL/dx̂ − x̂·mean(dL/dx̂ ⊙ x̂)): r depends on x too, which adds the projection term; forgetting it is a classic mistake. The projection term removes the part of the gradient along x, so dL/dx is perpendicular to x (up to ε): scaling x does not change x̂, so the loss cannot change along x. { $other }
step-explain-backward-linear = dX = dY·Wᵀ passes the gradient to the input, and dW = Xᵀ·dY gives the weight gradient. X comes first: the hand-written C++ backward pass xt started from says "dW = X^T @ dY, so X goes first into gemm_tn". Swapped, the product has shape (out, in) and only fits when the layer is square, where the mistake can hide. dW sums over all N positions: the same W is used at every position (it fans out), and each use adds the outer product of its input row and its output gradient. The 1/N of the batch mean is already inside the arriving gradient: the C++ pass divides by N once, at the loss, before any matmul, so every weight gradient below gets the right scale without rescaling.{ $extra }
step-explain-backward-rope = A rotation is orthogonal, so its backward is the transposed rotation Rᵀ: rotate each pair by the negative angle (in the hand-written C++ backward pass xt started from, the "transposed rotation" a0·c + a1·s, −a0·s + a1·c, where its a0, a1 are our ∂L/∂q̃ of the pair, q̃ the rotated query or key, and c, s are cos φ, sin φ). Rotating again by +φ is a classic mistake that keeps every norm intact and looks plausible; the gradient check catches it.
step-explain-backward-scores = dq̃[m,i] = (1/√hd)·Σⱼ dS[m,i,j]·k̃[κ,j], where κ = ⌊m/G⌋ is the kv head query head m reads, and dk̃[κ,j] = (1/√hd)·Σᵢ dS[m,i,j]·q̃[m,i] summed over every query head m with ⌊m/G⌋ = κ (q̃, k̃ after RoPE: the next step rotates their gradients back): the scale applies on the way back too. Masked scores were constants, so no gradient flows through them.{ $gqa }
step-explain-backward-softmax-attention = dL/dS = J·dL/dP per row, with J = diag(p) − p·pᵀ (p the row of P); J is symmetric, so J and Jᵀ are the same matrix. Entry by entry dS_j = p_j·(dP_j − Σ_j′ p_j′·dP_j′), j and j′ keys of the row. The subtracted sum keeps every row of dL/dS summing to zero: Σ_j dS_j = Σ_j p_j·dP_j − (Σ_j p_j)·Σ_j′ p_j′·dP_j′ = 0 because Σ_j p_j = 1 (adding a constant to all scores of a row changes nothing).{ $row_sums } Dropping it is a classic mistake. Pick a row to see its Jacobian and the chain-rule check.
step-explain-backward-softmax-output = dL/dlogits = J·dL/dp per position. Composed with the per-token loss this is the fused rule of the hand-written C++ backward pass xt started from, dL/dlogits = (p − onehot)/N, shown below with numbers. { $output_facts } The C++ pass warns (in Russian): "a second multiplication by inv must NOT be here: the probabilities are already normalized". Its inv is 1/Σ_w e^(z_w − max z), where z are the logits; that sum is at least 1 (the largest logit alone contributes e⁰ = 1), so multiplying by inv a second time would divide every gradient of a position by it again.{ $inv_sums }
step-explain-backward-attend = dP = dO·vᵀ gives each attention probability the gradient of how useful its value was; dv = Pᵀ·dO sends each position's value the gradient of every query that read it (the values of kv head ⌊m/G⌋ for query head m). dP is dense: a masked entry (j > i), where P is 0, still gets its dO·vᵀ; the softmax's backward multiplies it by p = 0.{ $gqa }
step-explain-backward-merge-heads = The gradient of the concatenated vector is cut back into the H heads: a pure re-layout.
step-explain-backward-residual = { $sum }: along the skip ∂{ $out_symbol }/∂{ $skip_symbol } = I (the identity), and ∂{ $out_symbol }/∂branch = I, so the skip { $skip_symbol } and the branch's output both receive dL/d{ $out_symbol } unchanged, a copy. { $skip_symbol } is also the branch's input, so in full ∂{ $out_symbol }/∂{ $skip_symbol } is I plus the branch's Jacobian: the branch hands { $skip_symbol } a second share once its own backward has run (through the { $norm } RMSNorm), added to the skip's copy, never substituted for it: residual gradients add. The residual view shows the gradient arriving along the skip, the part the branch adds, and their sum, the full dL/d{ $skip_symbol } ({ $skip } in the recorded names).
step-explain-backward-swiglu = dL/da = dL/ds ⊙ u ⊙ silu′(a) with silu′(a) = σ(a)·(1 + a·(1 − σ(a))), and dL/du = dL/ds ⊙ silu(a): each factor of the product receives the gradient times the other factor.
step-explain-backward-unembed = dn = dlogits·W and dW += dlogitsᵀ·n (V×C). dW sums over all N positions: the same W is used at every position (it fans out), and each use adds the outer product of its input row and its output gradient. The 1/N of the batch mean is already inside the arriving gradient: the hand-written C++ backward pass xt started from divides by N once, at the loss, before any matmul, so every weight gradient below gets the right scale without rescaling.{ $tied }
step-explain-backward-token-loss = Only the target's probability receives a gradient: dL/dp_target = −(1/N)/p_target, every other entry is 0 (the Iverson bracket [v = target] of the formula is 1 for the target, 0 elsewhere). Small probabilities of the right token give large gradients.
step-explain-backward-mean = dL/dℓ = 1/N for every position: the batch mean, applied exactly once, here, before any matmul. The hand-written C++ backward pass xt started from says: "average over the batch BEFORE multiplying by the matrices: then all the weights below automatically get the right scale". Dividing again later, or not at all, is a classic mistake.

## What a linear map computes, and what reads a norm's output (by the tensor it makes)

step-role-attention-q = queries: what each position is looking for
step-role-attention-k = keys: what each position offers to be found by
step-role-attention-v = values: what each position passes on when it is attended to
step-role-attention-out = the attention output: the concatenated heads mixed back into the C-wide residual stream
step-role-feed-forward-gate = the gate pre-activation a, which goes through silu
step-role-feed-forward-up = the up projection u, which the gate will scale
step-role-feed-forward-out = the feed-forward output: the F-wide hidden vector projected back to C features
step-role-other = a linear map
step-reader-attention = attention
step-reader-ffn = the feed-forward
step-reader-head = the LM head
step-weight-tied = tok_embeddings (tied)
step-weight-untied = the output matrix

## Sentences a step's explanation holds where they apply

step-gqa-forward = {" "}With grouped-query attention (GQA) { $group } query heads share each key/value head: query head m reads kv head ⌊m/{ $group }⌋.
step-gqa-backward-key = {" "}With grouped-query attention (GQA) { $group } query heads share each key/value head: query head m reads kv head ⌊m/{ $group }⌋. So a key receives the sum of their gradients.
step-gqa-backward-value = {" "}With grouped-query attention (GQA) { $group } query heads share each key/value head: query head m reads kv head ⌊m/{ $group }⌋. So a value receives the sum of their gradients.
step-tied-forward = {" "}With tied embeddings W is tok_embeddings E: the table that turns tokens into vectors also scores them.
step-tied-unembed = {" "}With tied embeddings W is tok_embeddings E, so E receives two gradient contributions that add: this one (every row), and the embedding lookup's at the last backward step (only the rows of the input tokens).
step-tied-embedding = {" "}With tied embeddings this table E is also the LM head's weight (logits = n·Eᵀ), so it receives two gradient contributions that add: this lookup's (only the rows of the input tokens) and the one the logits step added to every row, dE += dlogitsᵀ·n.
step-stream-attention = The normalized copy n only feeds attention: the residual stream x itself goes around it, unchanged, to the residual add h = x + attention.
step-stream-ffn = The normalized copy n only feeds the feed-forward: the residual stream h itself goes around it, unchanged, to the residual add x′ = h + feed-forward.
step-stream-final = The residual stream ends here: its last value reaches the LM head, and so the loss, only through this norm.
step-norm-other-final = The last residual stream reaches the loss only through this norm: this is its whole gradient.
step-norm-other-attention = Here the norm's input is the residual stream x entering the layer ({ $recorded } in the recorded names). This is one of two contributions to dL/dx: the other comes along the skip of the residual add h = x + attention(RMSNorm(x)), which hands x the gradient dL/dh unchanged, a gradient that itself came back through every later layer. The two add (the hand-written C++ backward pass xt started from adds the norm's contribution into its running gradient dx with +=).
step-norm-other-ffn = Here the norm's input is h, the residual stream after attention (the x of the formulas above) ({ $recorded } in the recorded names). This is one of two contributions to dL/dh: the other comes along the skip of the residual add x′ = h + FFN(RMSNorm(h)), which hands h the gradient dL/dx′ unchanged, a gradient that itself came back through every later layer. The two add (the hand-written C++ backward pass xt started from adds the norm's contribution into its running gradient dx with +=).
step-extra-attention-out = {" "}Here the hand-written C++ backward pass xt started from warns: "read dx (already holding the FFN contribution), NOT dres" (its dx is our dL/dh, its dres our dL/dx′, the gradient of the layer's output). The gradient arriving at the attention output is dL/dh, and h = x + attention feeds both the feed-forward branch and the skip to the layer's output, so dL/dh holds both; using only dL/dx′ would drop the FFN's part.
step-extra-attention-in = {" "}The normalized input n feeds q, k and v, so its gradient is the sum of three such dX (the C++ pass: dxb = dq·Wqᵀ + dk·Wkᵀ + dv·Wvᵀ, its dxb being our dL/dn); this step adds one of them.
step-extra-ffn-in = {" "}The normalized input n feeds the gate and the up projection, so its gradient is the sum of two such dX (the C++ pass: dx2b = dh1·W1ᵀ + dh3·W3ᵀ, its dx2b being our dL/dn, its dh1 and dh3 our dL/da and dL/du); this step adds one of them.
step-induction = {" "}Layer { $layer }, head { $head }: induction head — it attends to the token after an earlier occurrence of the current one (measured on repeated random letters: { $score } of its attention lands there). { $repeat }

## A residual's sum as the explanation writes it (app/steps/explain.py)

step-residual-sum-attention = h = x + attention(RMSNorm(x))
step-residual-sum-ffn = x′ = h + FFN(RMSNorm(h))
step-residual-sum-other = out = skip + branch
