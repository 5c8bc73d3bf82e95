# The bug lab's words (app/buglab): each fault of the catalogue (xt_core/lab/faults.py keeps its
# structure: the step it breaks, the two lines), keyed by its id; the faulty-vs-correct comparison.

## The catalogue: buglab-fault-<id>, its .description and, where it needs one, .reason

buglab-fault-softmax_ce_normalized_twice = softmax ce normalized twice
    .description = Softmax-CE gradient divided by the softmax denominator a second time, though p is already normalized.
buglab-fault-attention_out_reads_dres = attention out reads dres
    .description = The attention output projection reads the gradient of the layer's output (dres) instead of dh, the gradient at h = x + attention, which already holds the FFN branch's contribution.
    .reason = needs projections without biases (qkv_bias = o_bias = false)
buglab-fault-rope_forward_rotation = rope forward rotation
    .description = RoPE backward rotates by +angle (the forward rotation R) instead of applying its transpose R^T.
    .reason = needs the llama family (family = llama)
buglab-fault-batch_mean_missing = batch mean missing
    .description = The mean over the N positions is forgotten: every gradient is N times too large.
buglab-fault-batch_mean_twice = batch mean twice
    .description = The mean over the N positions is applied twice: every gradient is N times too small.
buglab-fault-tied_embedding_one_contribution = tied embedding one contribution
    .description = With tied embeddings, the LM head's gradient is not added into tok_embeddings: only the lookup's contribution arrives.
    .reason = needs tied embeddings (tie_embeddings = true)
buglab-fault-rmsnorm_missing_projection = rmsnorm missing projection
    .description = RMSNorm backward treats 1/rms as a constant and loses the projection term - xhat * mean(xhat * dxhat).
    .reason = needs the llama family (family = llama)
buglab-fault-softmax_missing_sum_term = softmax missing sum term
    .description = Attention softmax backward keeps only p * dp = diag(p) @ dp and drops the whole - p p^T part of the Jacobian J = diag(p) - p p^T: the - p * sum(p * dp) term.
buglab-fault-attention_scale_missing = attention scale missing
    .description = The 1/sqrt(hd) scale of the scores is forgotten in backward.
buglab-fault-swiglu_silu_for_derivative = swiglu silu for derivative
    .description = SwiGLU backward multiplies by silu(gate) where its derivative silu'(gate) belongs.
    .reason = needs the llama family (family = llama)
buglab-fault-gqa_kv_not_summed = gqa kv not summed
    .description = With grouped-query attention, a value head's gradient takes only the first query head of its group instead of the sum over all heads sharing it.
    .reason = needs grouped-query attention (n_kv_head < n_head)
buglab-fault-linear_dw_transposed = linear dw transposed
    .description = dW computed as dY^T X instead of X^T dY: for the square wq the shapes still fit, the values are transposed.
    .reason = needs projections without biases (qkv_bias = o_bias = false)

## GPT-2 and Qwen

buglab-fault-layernorm_missing_mean = layernorm missing mean
    .description = LayerNorm backward forgets that the mean μ depends on every x_j and loses the mean term - mean(dxhat): dx no longer sums to zero over a position's features.
    .reason = needs the GPT-2 family (family = gpt2)
buglab-fault-bias_grad_one_row = bias grad one row
    .description = The feed-forward output bias b2 keeps the gradient of one row (the last position) instead of the sum over all B·T rows, though it was added at every position of every sequence.
    .reason = needs the GPT-2 family with feed-forward biases (family = gpt2, mlp_bias = true)

# the home form's choice: a fault and the step it is in
buglab-fault-option = { $fault } — in: { $op }

## Faulty against correct (GET .../steps/{ "{" }index{ "}" }/diff)

buglab-diff-arriving-wrong = The gradient arriving at this op is already wrong: the mistake happened earlier in the backward pass (in a step that ran before this one), and this op passes it on.
buglab-diff-this-op = The gradient arriving here is exactly right, but what this op computes from it ({ $tensors }) is not: this op's backward is the broken one.
buglab-diff-all-right = Every gradient of this step is exactly the correct one: the mistake, if any, comes later in the backward pass.
buglab-diff-title-arriving = dL/d({ $name }), the gradient arriving: faulty vs correct
buglab-diff-title-contribution = dL/d({ $name }), this op's contribution: faulty vs correct
buglab-diff-identical = Identical, bit for bit: the difference is 0 everywhere.
buglab-diff-differ = They differ: max |faulty − correct| = { FORMAT($diff, spec: ".3g") }, against a largest |correct| value of { FORMAT($largest, spec: ".3g") }.
buglab-diff-head = Head { $head } of { $heads }: the head where faulty and correct differ most.
buglab-diff-head-same = Head 0 of { $heads } shown: every head is identical.
buglab-diff-numbers = Numbers: faulty − correct.

# a learner's probes of a quiz, all spent (409)
buglab-probes-spent = all { $most } of your probes of this quiz are spent (steps { $steps }); answer the quiz to see every check
