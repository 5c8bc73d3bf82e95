# The home page (templates/home.html and the templates it includes; static/js/home/*).

home-title = Start
home-heading = Watch one training step
home-cannot-start = <strong>Cannot start:</strong> { $message }
home-internal-error = The server could not read this spec (an internal error). Try another text or model.

## The ways in (templates/_home_ways.html)

home-ways = Ways in
home-way-trained = ▶ Step through a trained model
    .title = A model trained on its task, its example text, ending with an SGD update: every op of the forward, loss, backward and update, each gradient checked
home-way-lessons = <strong>Lessons:</strong>
home-way-join = <strong>Join a class:</strong>
home-way-join-code = code
home-way-join-button = Join
home-way-quiz = <strong>Quiz:</strong> find the bug
home-way-real = <strong>Real model:</strong> { $model }

## The text, the model, the seed, the tokenizer, the precision

home-text = Text
home-examples = Examples:
# An example text in the language (a line people know), for a random init.
home-example-quote = To be, or not to be, that is the question.
home-text-help = Inputs are the tokens without the last one; targets are the tokens shifted by one.
home-tokens = Token ids (instead of text; rows separated by “;”)
home-model = Model
home-model-help = Random weights from the seed; presets fill in the sizes.
home-seed = Seed
home-tokenizer = Tokenizer
home-tokenizer-char = char: one token per character
home-tokenizer-byte = byte: one token per UTF-8 byte
home-precision = Precision
home-start = Start ▶
home-start-help = Then use ← → to step, Home/End to jump to the ends, P to present. The options below are optional.
home-model-refused = <code>{ $path }</code> (<code>xt serve --model</code>) could not be opened: { $reason }
home-model-fetchable = { $model } ({ $description }) is not installed on this server: run <code>{ $command }</code> ({ $size_mb } MB, once), then reload.

## The model list (templates/_model_options.html, static/js/home/model_list.js)

home-models-shipped = Demo models (trained)
home-models-real = Real models (pretrained)
home-models-served = Served models (xt serve --model)
home-models-uploaded = Uploaded checkpoints
home-models-random = Random init (sizes below)
home-models-presets = Random init: presets
home-models-unavailable = Model list unavailable ({ $error }); the sizes below still work.
home-tokenizer-from-file = { $tokenizer } (from the model file)
home-checkpoint-real = { $description }{ $positions }; its sizes are fixed.
home-checkpoint = { $description }{ $sizes }; { $tokens }. Its sizes are fixed.{ $measured }
home-checkpoint-sizes = { $layers } { $layers ->
        [one] layer
       *[other] layers
    }, { $heads } heads, width { $width }, V = { $vocab }, { $positions }
home-checkpoint-tokenizer = { $tokenizer } tokenizer
home-checkpoint-no-tokenizer = no tokenizer: token ids only
home-measured-induction = Induction head: layer { $layer }, head { $head } (score { $score }).
home-measured-loss = Loss on held-out sentences { $heldout } (training { $train }).
home-measured-sample = It writes: “{ $sample }”

## The positions a checkpoint takes (GET /api/models' max_positions)

home-positions-seq-len = up to { $count } positions
home-positions-none = none
home-positions = { $count } positions
home-positions-training-same = { $count } positions ({ $training } with training steps first)
home-positions-with = { $count } with { $optimizer }
home-positions-training-each = { $count } positions (with training steps first: { $each })
home-positions-no-text = no text fits this server's trace limit
home-positions-up-to = up to { $positions }
home-positions-by-dtype = up to { $float32 } in float32, { $float64 } in float64 (this server's trace limit)

## The live token count (static/js/home/count.js)

home-count = { $tokens } { $tokens ->
        [one] token
       *[other] tokens
    } → { $positions } { $positions ->
        [one] position
       *[other] positions
    } (inputs = tokens[:-1], targets = tokens[1:])
home-count-too-few = need at least two tokens
home-count-over-seq-len = more than Max positions = { $count }
home-count-over-model = more than the { $count } { $count ->
        [one] position
       *[other] positions
    } this model takes { $when }
home-count-over-none = more than the positions this model takes { $when }: none, at this server's limits
home-when = in { $dtype }
home-when-training = in { $dtype } with training steps first by { $optimizer }
home-count-unknown = not in this model's alphabet: { $characters }
home-count-by-server = counted by { $tokenizer }: { $pieces }
home-count-failed = Cannot count the tokens: { $error }
home-counting = Counting the tokens with { $tokenizer } (on the server)…

## Model sizes (templates/_config_field.html; app/routes/pages.py CONFIG_FORM)

home-sizes = Model sizes (random init)
home-sizes-more = More: vocabulary, tied embeddings, RoPE θ, ε
home-yes = yes
home-no = no
home-automatic = automatic
home-field-n_layer = Layers
    .help = transformer blocks
home-field-n_head = Query heads
home-field-n_kv_head = Key/value heads
    .help = fewer than query heads = grouped-query attention
home-field-n_embd = Width C
    .help = n_embd: must be divisible by the number of heads
home-field-ffn_hidden = FFN hidden width
home-field-seq_len = Max positions
    .help = seq_len: the text may have at most seq_len + 1 tokens
home-field-vocab_size = Vocabulary size
    .help = blank = automatic (256 for byte, the text's characters for char)
home-field-tie_embeddings = Tie embeddings
    .help = logits reuse the token embedding matrix
home-field-rope_theta = RoPE θ
    .help = rotation base
home-field-norm_eps = RMSNorm ε

## The update step and training first (templates/_training_fields.html, static/js/home/training.js)

home-training = Update step and training
home-optimizer = Optimizer
home-optimizer-none = none: forward and backward only
home-optimizer-with-update = { $optimizer }: end with its update
home-optimizer-help = The last step shows ΔW, update ratios and a line search.
home-lr = Learning rate
home-lr-blank = blank: { $defaults }
home-train-first = Train first
home-train-steps = 0–{ $most } optimizer { $most ->
        [one] step
       *[other] steps
    } on this text before the one you watch
home-train-none = No training first: not even one step of this model on this text fits the server's time limit.
home-train-unknown = The server says how many optimizer steps fit once the text suits this model
home-train-optimizer = ({ $optimizer }, lr { $lr }).
home-train-optimizer-random = ({ $optimizer }, lr { $lr }); large sizes allow fewer.

## The bug lab (templates/_buglab_picker.html, static/js/home/buglab_picker.js)

home-buglab = Bug lab: break the backward pass on purpose
home-backward = Backward pass
home-fault-none = correct: no bug
home-fault-quiz = quiz: hide a random bug for me to find
home-fault-plant = plant a known bug
home-fault-help = Each bug swaps one op's backward for a classic mistake; the gradient check still measures the true loss, so it fails first exactly there.
home-fault-quiz-help = The server picks one of the bugs that fit these sizes and hides it. Step through the backward pass, find the step where the gradient first goes wrong, and press “This step is broken” there.
home-fault-not-here = Not with these sizes: it { $reason }.
home-fault-not-here-short = { $fault } (not with these sizes)
home-fault-layer = In layer
home-fault-layer-last = last
home-fault-layer-help = blank = the last layer, nearest the loss

## Upload (templates/_upload.html, static/js/home/upload.js)

home-upload = Use your own checkpoint
home-upload-file = Checkpoint file
home-upload-format-first = An { $maker } { $suffixes }
home-upload-format-more = , or a { $maker } { $suffixes }
home-upload-or = or
home-upload-help = { $formats }; at most { $size_mb } MB (<code>xt train --task text --out model.safetensors</code> writes one). Stored under its sha256; nothing is ever unpickled.
home-upload-button = Upload
home-upload-choose = Choose a checkpoint file first.
home-upload-busy = Uploading { $file }…
home-upload-added = Added { $model }: it is selected in the model list above.
home-upload-refused = Not accepted: { $error }
home-upload-failed = Upload failed: { $error }

## GPT-2 and Qwen
# the model family a random init computes (templates/_family_field.html)

home-field-family = Model family
    .help = which ops the model is made of; the sizes are the same fields
home-field-family-llama = Llama (RMSNorm, RoPE, SwiGLU)
home-field-family-gpt2 = GPT-2 (LayerNorm, GELU, learned positions, biases)
