# The words of the recorded tensors, the walkthrough's structure and the axes (xt_core/names.py keeps
# only structure; app/steps/titles.py and app/steps/axes.py read these). A recorded tensor's messages
# are named by its row's words id (xt_core/recorded.py): -title (what its op computes), -label (what
# it holds; $layer its layer), -about (what an explanation says it is).

## The recorded tensors (xt_core/families/llama_names.py)

names-embedding-title = Token embedding lookup
names-embedding-label = token embeddings
names-attention-norm-out-title = RMSNorm before attention
names-attention-norm-out-label = RMSNorm output of layer { $layer }, before attention
names-attention-norm-out-about = attention
names-attention-q-title = Query projection q = n·Wq
names-attention-q-label = layer { $layer } queries
names-attention-q-about = queries: what each position is looking for
names-attention-k-title = Key projection k = n·Wk
names-attention-k-label = layer { $layer } keys
names-attention-k-about = keys: what each position offers to be found by
names-attention-v-title = Value projection v = n·Wv
names-attention-v-label = layer { $layer } values
names-attention-v-about = values: what each position passes on when it is attended to
names-attention-q-biased-title = Query bias q + bq (Qwen2)
names-attention-q-biased-label = layer { $layer } queries, bias added
names-attention-k-biased-title = Key bias k + bk (Qwen2)
names-attention-k-biased-label = layer { $layer } keys, bias added
names-attention-v-biased-title = Value bias v + bv (Qwen2)
names-attention-v-biased-label = layer { $layer } values, bias added
names-attention-q-norm-out-title = QK-norm: RMSNorm of each query head (Qwen3)
names-attention-q-norm-out-label = layer { $layer } queries, each head RMS-normalised, before RoPE
names-attention-k-norm-out-title = QK-norm: RMSNorm of each key head (Qwen3)
names-attention-k-norm-out-label = layer { $layer } keys, each head RMS-normalised, before RoPE
names-attention-q-rot-title = RoPE rotates the queries
names-attention-q-rot-label = layer { $layer } queries after RoPE
names-attention-k-rot-title = RoPE rotates the keys
names-attention-k-rot-label = layer { $layer } keys after RoPE
names-attention-scores-title = Attention scores q̃·k̃ᵀ/√hd, causal mask
names-attention-scores-label = layer { $layer } attention scores, all heads
names-attention-probs-title = Attention softmax over keys
names-attention-probs-label = layer { $layer } attention probabilities, all heads
names-attention-heads-title = Weighted sum of values, per head
names-attention-heads-label = layer { $layer } attention outputs, all heads
names-attention-concat-title = Concatenate the heads
names-attention-concat-label = layer { $layer } heads side by side
names-attention-out-title = Attention output projection ·Wo
names-attention-out-label = layer { $layer } attention output
names-attention-out-about = the attention output: the concatenated heads mixed back into the C-wide residual stream
names-attention-residual-title = Residual add h = x + attention
names-attention-residual-label = residual stream after layer { $layer } attention
names-ffn-norm-out-title = RMSNorm before the feed-forward
names-ffn-norm-out-label = RMSNorm output of layer { $layer }, before the feed-forward
names-ffn-norm-out-about = the feed-forward
names-feed-forward-gate-title = Gate projection ·W1
names-feed-forward-gate-label = layer { $layer } gate projection
names-feed-forward-gate-about = the gate pre-activation a, which goes through silu
names-feed-forward-up-title = Up projection ·W3
names-feed-forward-up-label = layer { $layer } up projection
names-feed-forward-up-about = the up projection u, which the gate will scale
names-feed-forward-swiglu-title = SwiGLU silu(gate) ⊙ up
names-feed-forward-swiglu-label = layer { $layer } SwiGLU activation
names-feed-forward-out-title = Down projection ·W2
names-feed-forward-out-label = layer { $layer } feed-forward output
names-feed-forward-out-about = the feed-forward output: the F-wide hidden vector projected back to C features
names-ffn-residual-title = Residual add x′ = h + feed-forward
names-ffn-residual-label = residual stream after layer { $layer }
names-norm-out-title = Final RMSNorm
names-norm-out-label = final RMSNorm output
names-norm-out-about = the LM head
names-logits-title = Logits: LM head
names-logits-label = next-token logits
names-output-probs-title = Output softmax: next-token probabilities
names-output-probs-label = next-token probabilities
names-token-loss-title = Per-token loss −log p(target)
names-token-loss-label = loss per position
names-loss-title = Mean loss over all positions
names-loss-label = mean loss L

## GPT-2's recorded tensors (xt_core/families/gpt2_names.py): those worded differently from Llama's

names-gpt2-embedding-positions-title = Learned position embedding added
names-gpt2-embedding-positions-label = token + position embeddings
names-gpt2-attention-norm-out-title = LayerNorm before attention
names-gpt2-attention-norm-out-label = LayerNorm output of layer { $layer }, before attention
names-gpt2-attention-norm-out-about = attention
names-gpt2-attention-q-title = Query projection q = n·Wq + bq
names-gpt2-attention-q-label = layer { $layer } queries
names-gpt2-attention-q-about = queries: what each position is looking for
names-gpt2-attention-k-title = Key projection k = n·Wk + bk
names-gpt2-attention-k-label = layer { $layer } keys
names-gpt2-attention-k-about = keys: what each position offers to be found by
names-gpt2-attention-v-title = Value projection v = n·Wv + bv
names-gpt2-attention-v-label = layer { $layer } values
names-gpt2-attention-v-about = values: what each position passes on when it is attended to
names-gpt2-attention-scores-title = Attention scores q·kᵀ/√hd, causal mask
names-gpt2-attention-scores-label = layer { $layer } attention scores, all heads
names-gpt2-attention-out-title = Attention output projection ·Wo + bo
names-gpt2-attention-out-label = layer { $layer } attention output
names-gpt2-attention-out-about = the attention output: the concatenated heads mixed back into the C-wide residual stream
names-gpt2-ffn-norm-out-title = LayerNorm before the feed-forward
names-gpt2-ffn-norm-out-label = LayerNorm output of layer { $layer }, before the feed-forward
names-gpt2-ffn-norm-out-about = the feed-forward
names-gpt2-feed-forward-up-title = Up projection ·W1 + b1
names-gpt2-feed-forward-up-label = layer { $layer } up projection
names-gpt2-feed-forward-up-about = the up projection a, which goes through GELU
names-gpt2-feed-forward-gelu-title = GELU activation
names-gpt2-feed-forward-gelu-label = layer { $layer } GELU activation
names-gpt2-feed-forward-out-title = Down projection ·W2 + b2
names-gpt2-feed-forward-out-label = layer { $layer } feed-forward output
names-gpt2-feed-forward-out-about = the feed-forward output: the F-wide hidden vector projected back to C features
names-gpt2-norm-out-title = Final LayerNorm
names-gpt2-norm-out-label = final LayerNorm output
names-gpt2-norm-out-about = the LM head

## Trace.names() (xt_core/listing.py): the title of a name that no op records

names-listed-token-ids = token ids
names-listed-parameter = parameter

## The parameters and token ids (app/steps/titles.py)

names-param-tokens-label = input token ids
names-param-targets-label = target token ids
names-param-tok-embeddings-label = token embedding matrix
names-param-attention-norm-label = layer { $layer } attention RMSNorm gain
names-param-attention-wq-label = layer { $layer } query weights Wq
names-param-attention-wk-label = layer { $layer } key weights Wk
names-param-attention-wv-label = layer { $layer } value weights Wv
names-param-attention-wo-label = layer { $layer } attention output weights Wo
names-param-attention-bq-label = layer { $layer } query bias bq
names-param-attention-bk-label = layer { $layer } key bias bk
names-param-attention-bv-label = layer { $layer } value bias bv
names-param-attention-q-norm-label = layer { $layer } query QK-norm gain
names-param-attention-k-norm-label = layer { $layer } key QK-norm gain
names-param-ffn-norm-label = layer { $layer } feed-forward RMSNorm gain
names-param-feed-forward-w1-label = layer { $layer } gate weights W1
names-param-feed-forward-w3-label = layer { $layer } up weights W3
names-param-feed-forward-w2-label = layer { $layer } down weights W2
names-param-norm-label = final RMSNorm gain
names-param-output-label = LM head weights
names-param-pos-embeddings-label = position embedding matrix
names-param-attention-norm-bias-label = layer { $layer } attention LayerNorm bias
names-param-attention-bo-label = layer { $layer } attention output bias bo
names-param-ffn-norm-bias-label = layer { $layer } feed-forward LayerNorm bias
names-param-feed-forward-b1-label = layer { $layer } up bias b1
names-param-feed-forward-b2-label = layer { $layer } down bias b2
names-param-norm-bias-label = final LayerNorm bias
names-param-gpt2-attention-norm-label = layer { $layer } attention LayerNorm gain
names-param-gpt2-ffn-norm-label = layer { $layer } feed-forward LayerNorm gain
names-param-gpt2-feed-forward-w1-label = layer { $layer } up weights W1
names-param-gpt2-norm-label = final LayerNorm gain

## The block diagram and the timeline's groups

names-block-embedding = Token embedding
names-block-attention = Layer { $layer } · attention
names-block-ffn = Layer { $layer } · feed-forward
names-block-norm = Final RMSNorm
names-block-embedding-positions = Token and position embeddings
names-block-norm-layernorm = Final LayerNorm
names-block-head = LM head (logits)
names-block-loss = Softmax and cross-entropy loss
names-block-update = Optimizer update
names-group-embedding = Embedding
names-group-layer = Layer { $layer }
names-group-output = Output and loss

## A step's title, and its figures' titles

names-step = { $op }
names-step-backward = { $op } — backward
names-step-layer = Layer { $layer } · { $op }
names-step-layer-backward = Layer { $layer } · { $op } — backward
names-update-title = Parameter update: one { $optimizer } step
names-heads-all = all heads
names-heads-one = head { $head }
names-title-one-head = { $title } — head { $head }
names-input-title = Input: { $label }
names-input-param-title = Input: { $label } (a parameter)
names-arriving-title = Gradient arriving at the { $label }
names-contribution-param-title = Weight gradient from this op: { $label }
names-contribution-title = This op's share of the gradient of the { $label }

## Axes (app/steps/axes.py): their titles, and which of a large vocabulary's tokens are drawn

names-axis-input-feature = input feature
names-axis-output-feature = output feature
names-axis-token = token
names-axis-feature = feature
names-axis-position = position
names-axis-query = query
names-axis-key = key
names-axis-columns-gradient-note = { $shown } of the { $total } tokens are drawn: this sequence's { $targets } target tokens, then those with the largest |gradient| at any position. The other { $rest } columns are left out.
names-axis-columns-probability-note = { $shown } of the { $total } tokens are drawn: this sequence's { $targets } target tokens, then those with the highest probability at any position. The other { $rest } columns are left out.
names-axis-reads-lookup = The embedding lookup reads only the input tokens' rows.
names-axis-reads-head = The LM head reads every row: each row scores its token at every position.
names-axis-reads-both = The embedding lookup reads only the input tokens' rows; the LM head, tied to this table, reads every row: each row scores its token at every position.
names-axis-rows-note = { $shown } of the { $total } rows are drawn: the batch's { $inputs } distinct input tokens. { $reads }
names-axis-rows-more-note = { $shown } of the { $total } rows are drawn: the batch's { $inputs } distinct input tokens, then { $more } more of its targets. { $reads }
names-axis-lookup-rows-note = The { $shown } nonzero rows are drawn, those of the tokens this step looked up; the other { $rest } rows of the { $total }-token vocabulary are exactly zero.
names-axis-gradient-rows-note = { $shown } of the { $total } rows are drawn: the batch's tokens and targets, then the rows of largest |gradient|. { $nonzero } rows are nonzero; the rows not drawn are left out.
names-axis-gradient-rows-zero-note = { $shown } of the { $total } rows are drawn: the batch's tokens and targets, then the rows of largest |gradient|. { $nonzero } rows are nonzero; the other { $zero } rows are exactly zero; the rows not drawn are left out.

## A recorded tensor's entries on a colour bar, a value axis and in the hover (app/steps/axes.py
## value_name): the word of a row whose symbol (xt_core/recorded.py) is a word, not a letter

names-value-q-rot = q_rot
names-value-k-rot = k_rot
names-value-scores = scores
names-value-heads = heads
names-value-concat = concat
names-value-attention = attention
names-value-gate = gate
names-value-up = up
names-value-swiglu = swiglu
names-value-gelu = gelu
names-value-feed-forward = feed-forward
names-value-logit = logit
names-value-loss = loss
names-index-sequence = sequence { $index }
