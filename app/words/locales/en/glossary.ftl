# The glossary (app/steps/glossary.py): every term a first-year student may not know, defined once.
# glossary-<key> is the term, .forms the spellings the page looks for in a step's text (in the order
# tried, separated by |: list each case a sentence may use), .definition what shows on hover, focus and tap.

glossary-cpp-backward-pass = C++ backward pass
    .forms = the hand-written C++ backward pass xt started from | the C++ pass
    .definition = The file xt started from: a hand-written C++ backward pass of this same architecture, comments in Russian, which names classic mistakes on purpose. Its names, ours in brackets: x_in (x), xb (n before attention), att (P), attout (the concatenated heads), proj (the attention output), x_mid or x2 (h), x2b (n before the feed-forward), h1 (a), h3 (u), ha (s), fo (the feed-forward output), x_out (x′), xf (the final norm's output), wte (tok_embeddings E); dres = dL/dx′, dx its running gradient of the residual stream, dxb and dx2b = dL/dn, dh1 = dL/da, dh3 = dL/du, inv = 1/Σ e^(z − max z). docs/notation.md lists them all.

glossary-jacobian = Jacobian
    .forms = Jacobian
    .definition = The matrix of every partial derivative of a function's outputs by its inputs, J[i, j] = ∂outᵢ/∂inⱼ. A backward step multiplies the arriving gradient by its transpose, dL/din = Jᵀ·dL/dout (a linear layer's backward is dY·Wᵀ). A softmax's is J = diag(p) − p·pᵀ, which is symmetric: there J = Jᵀ, so J·dL/dp is the same product.

glossary-onehot = onehot
    .forms = onehot
    .definition = A vector of zeros with a single 1, at the index of the target token.

glossary-sigma = σ
    .forms = σ(a)
    .definition = The logistic sigmoid σ(a) = 1/(1 + e^(−a)): a number between 0 and 1.

glossary-rope = RoPE
    .forms = RoPE
    .definition = Rotary position embedding: each pair of query and key features is rotated by an angle proportional to the position, so a query·key product depends on how far apart the two positions are.

glossary-swiglu = SwiGLU
    .forms = SwiGLU
    .definition = The feed-forward's gated activation: silu(a) ⊙ u, one projection (the gate a, through silu) scaling another (the up projection u) feature by feature.

glossary-gqa = GQA
    .forms = grouped-query attention | GQA
    .definition = Grouped-query attention: G query heads share one key/value head, so query head m reads kv head ⌊m/G⌋ and the model stores fewer keys and values.

glossary-lm-head = LM head
    .forms = LM head
    .definition = The last matrix product of a language model: it turns each position's final vector into one score (logit) per vocabulary token.

glossary-residual-stream = residual stream
    .forms = residual stream
    .definition = The running vector of each position (x, then h, then x′ in each layer) that every sublayer reads a normalized copy of and adds its output into.

glossary-iverson-bracket = Iverson bracket
    .forms = Iverson bracket
    .definition = [condition]: 1 when the condition holds, 0 otherwise; [v = target] picks the target's entry.

glossary-projection-term = projection term
    .forms = projection term
    .definition = In RMSNorm's backward, −x̂·mean(dL/dx̂ ⊙ x̂): it removes the part of the gradient along x, because the factor r = 1/rms(x) depends on x too.

glossary-fan-out = fan-out
    .forms = fans out
    .definition = One tensor used in several places (a weight at every position, a vector read by q, k and v): its gradient is the sum of what each use sends back.

glossary-gemm-tn = gemm_tn
    .forms = gemm_tn
    .definition = The C++ pass's matrix product with its first argument transposed: gemm_tn(A, B, C) adds Aᵀ·B into C.

glossary-np-add-at = np.add.at
    .forms = np.add.at
    .definition = NumPy's unbuffered add: np.add.at(table, ids, rows) adds every row into table[id], even when an id repeats.

glossary-fancy-index-assignment = fancy-index assignment
    .forms = fancy-index assignment
    .definition = table[ids] += rows in NumPy: with a repeated id only one of its rows lands, the others are lost.

glossary-inv = inv
    .forms = inv
    .definition = In the C++ pass, 1/Σ_w e^(z_w − max z): the softmax's normalizer, applied once.

glossary-dres = dres
    .forms = dres
    .definition = In the C++ pass, the gradient of a layer's output, dL/dx′; its dx is the running gradient (dL/dh in the attention half).

glossary-float64-twin = float64 twin
    .forms = float64 twin
    .definition = The same step (same weights, tokens and planted bug) computed in float64: a float32 trace's gradients are checked on it, so float32 round-off does not read as a wrong gradient.

glossary-first-order-prediction = first-order prediction
    .forms = first-order prediction
    .definition = What the gradient alone promises: moving by −η·g lowers the loss by η‖g‖², the tangent line of the loss at η = 0.

glossary-curvature = curvature
    .forms = curvature
    .definition = How fast the slope itself changes (the second derivative): it bends the loss away from the first-order prediction for larger steps.

glossary-richardson-extrapolation = Richardson extrapolation
    .forms = Richardson extrapolation | extrapolated
    .definition = Combining differences taken at several step sizes so their leading error cancels: a sharper derivative than one central difference where the loss curves strongly.

glossary-bias-correction = bias correction
    .forms = bias-corrected | bias correction
    .definition = Adam's m and v start at 0, so early on they underestimate the gradient's mean and mean square; dividing by 1 − β₁ᵗ and 1 − β₂ᵗ undoes that.

glossary-decoupled-weight-decay = decoupled weight decay
    .forms = decoupled
    .definition = AdamW shrinks the weights by η·λ·W apart from the gradient, instead of adding λW to g (L2), which Adam would rescale entry by entry.

glossary-central-difference = central difference
    .forms = central difference
    .definition = (L(X + δ·u) − L(X − δ·u)) / 2δ, δ a small step: the slope of the loss along u from two nearby points, its error of order δ².
