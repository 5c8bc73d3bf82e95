# The API's refusals a page shows (a 4xx answer's `msg` or `detail`), as app/errors.py's SpecError
# and the routes' HTTPException carry them (app/words/said.py). Their `loc` and `type` never
# change with the language: programs read those. Values are the client's own input, field names
# and code, quoted as they are.

## Values a message quotes

error-integer-of-bits = an integer of { $bits } bits
error-kind-string = a string
error-kind-boolean = true/false
error-kind-number = a number
error-kind-list = a list

## A field's value (app/errors.py, app/spec/schema.py)

error-not-a-boolean-number = must be a number, not { $value }
error-not-a-boolean = must be true or false, not { $value }
error-not-an-object = { $field } must be an object such as { $form }, got { $kind }
error-not-an-object-hinted = { $field } must be an object such as { $form } { $hint }, got { $kind }
error-hint-optimizer-name = (name "adamw" or "sgd")
error-between = { $field } must be between { $low } and { $high }, got { $value }
error-out-of-range = { $field } must be between 0 and { $last } ({ $why }), got { $value }
error-lone-surrogate = holds a lone surrogate (half of a UTF-16 pair) at character { $index }, not a character
# pydantic's "Value error, …" around a validator's own sentence
error-value-error = Value error, { $reason }

## The body and the server (app/main.py)

error-body-not-json = the body is not valid JSON ({ $reason })
error-body-not-json-type = send the body as application/json, not { $sent }
error-more-errors = ... and { $count } more errors
error-internal = internal error: the server logged it; please report what you did

## pydantic's own messages: English reads pydantic's text as it is; these are for the other
## languages, and the English here is pydantic's (tests/app/test_errors_words.py compares them)

error-pydantic-missing = Field required
error-pydantic-extra-forbidden = Extra inputs are not permitted
error-pydantic-int-type = Input should be a valid integer
error-pydantic-int-parsing = Input should be a valid integer, unable to parse string as an integer
error-pydantic-int-from-float = Input should be a valid integer, got a number with a fractional part
error-pydantic-float-type = Input should be a valid number
error-pydantic-float-parsing = Input should be a valid number, unable to parse string as a number
error-pydantic-finite-number = Input should be a finite number
error-pydantic-bool-type = Input should be a valid boolean
error-pydantic-bool-parsing = Input should be a valid boolean, unable to interpret input
error-pydantic-string-type = Input should be a valid string
error-pydantic-string-unicode = Input should be a valid string, unable to parse raw data as a unicode string
error-pydantic-string-too-long = String should have at most { $max_length } characters
error-pydantic-string-too-short = String should have at least { $min_length } characters
error-pydantic-list-type = Input should be a valid list
error-pydantic-dict-type = Input should be a valid dictionary
error-pydantic-model-type = Input should be a valid dictionary or instance of { $class_name }
error-pydantic-too-long = { $field_type } should have at most { $max_length } items after validation, not { $actual_length }
error-pydantic-literal-error = Input should be { $expected }
error-pydantic-greater-than-equal = Input should be greater than or equal to { $ge }
error-pydantic-greater-than = Input should be greater than { $gt }
error-pydantic-less-than-equal = Input should be less than or equal to { $le }
error-pydantic-less-than = Input should be less than { $lt }

## xt_core's refusals a page shows (app/spec/core_words.py: the English is xt_core's, word for word)

error-core-embd-by-heads = n_embd ({ $width }) must be divisible by n_head ({ $heads })
error-core-heads-by-kv = n_head ({ $heads }) must be divisible by n_kv_head ({ $kv_heads })
error-core-head-dim-odd = head_dim = { $width } must be even: RoPE rotates pairs (2i, 2i+1)
error-core-derived-head-dim-odd = head_dim = n_embd / n_head = { $width } must be even: RoPE rotates pairs (2i, 2i+1)
error-core-positive-finite = { $field } must be a positive finite number, got { $value }
error-core-positive = { $field } must be positive, got { $value }
error-core-family = family must be one of { $known }, got { $value }
error-core-part = { $field } = { $value } is not computed for the { $family } family: it computes { $known }
error-core-char-not-in-alphabet = character { $char } at position { $position } is not in the tokenizer's vocabulary

## A spec's sizes, text and tokens (app/spec/resolve.py)

error-config-params = this config has { $params } parameters, more than the limit of { $most }
error-byte-vocab = the byte tokenizer needs vocab_size >= 256, got { $vocab_size }
error-text-alphabet = the text has { $chars } distinct characters, more than vocab_size = { $vocab_size }
error-token-rows = at most { $most } sequences, got { $rows }
error-token-rows-ragged = every row of tokens must have the same length
error-trace-bytes = building this trace would hold about { $mb } MB ({ $n_seq } sequence(s) × { $positions } positions, { $layers } layers × { $heads } heads, { $dtype }), more than the limit of { $limit } MB ({ $setting }): { $advice }
error-advice-smaller = use fewer positions, sequences, layers or heads
error-advice-fewer-tokens = give fewer tokens
error-advice-shorter-text = use a shorter text
error-advice-float32 = use float32
error-advice-fewer-tokens-or-untrained = give fewer tokens, or no training steps first (a float32 trace without them borrows the model's weights)
error-advice-shorter-text-or-untrained = use a shorter text, or no training steps first (a float32 trace without them borrows the model's weights)
error-advice-float32-or-untrained = use float32, or no training steps first (a float32 trace without them borrows the model's weights)
error-limit-cache-bytes = cache_bytes, all traces together
error-random-init-bpe = a random init has no "bpe" tokenizer (a real model brings its own): use "char" or "byte"
error-text-empty = text is empty: type at least two characters
error-too-few-tokens = need at least 2 tokens (inputs are ids[:-1], targets ids[1:]), got { $count }
error-too-many-tokens = { $count } tokens give T = { $positions } positions, more than seq_len = { $seq_len }
error-token-ids = token ids must lie in [0, vocab_size = { $vocab_size }), got ids from { $low } to { $high }
error-text-and-tokens = give text or tokens, not both
error-whose-random-init = a random init takes (max_seq_len = { $seq_len })
error-build-bytes-random-init = building this trace would hold about { $mb } MB (its training steps and the optimizer's state with the recorded step), more than the limit of { $limit } MB ({ $setting }): use fewer positions, layers or heads, SGD without momentum, or no training steps first
error-build-bytes-model = building this trace would hold about { $mb } MB (its training steps and the optimizer's state with the recorded step), more than the limit of { $limit } MB ({ $setting }): use a shorter text, SGD without momentum, or no training steps first

## A spec's model (app/spec/checkpoint.py)

error-models-available = available: { $names }
error-no-models = no checkpoints are installed; use null for a random init
error-unknown-model = unknown model { $model }; GET /api/models lists them ({ $listing })
error-model-unusable = model { $model } cannot be used: { $reason }
error-model-unreadable = model { $model } cannot be read: { $reason }
error-model-fixes-config = model { $model } fixes the config ({ $field } = { $value }): drop config.{ $field }, or pick a random init (model null) to choose sizes
error-text-too-long = the text gives at least { $at_least } positions, more than the { $most } { $whose }
error-whose-model = model { $model } takes (seq_len = { $seq_len })
error-model-tokenizer = model { $model } uses the { $own } tokenizer, not { $requested }: send "{ $own }" or leave it out
error-model-no-tokenizer-asked = model { $model } uses the no tokenizer, not { $requested }: leave it out and give token ids
error-model-no-tokenizer = model { $model } has no tokenizer (imported weights): give token ids instead
error-text-outside-alphabet = { $reason } of model { $model }; its characters are { $chars }
error-text-unencodable = { $reason } of model { $model }

## Training before the step (app/spec/training.py)

error-optimizer-name = optimizer name must be "sgd" or "adamw", got { $value }
error-optimizer-field = { $name } has no field { $field }; its fields: { $known }
error-optimizer-not-number = { $field } must be a number, got { $value }
error-optimizer-not-finite = { $field } must be a finite number, got { $value }
error-train-steps-range = train_steps must be between 0 and { $most } (max_train_steps), got { $value }
error-train-at-most = at most { $most } { $most ->
        [one] step
       *[other] steps
    } here
error-train-not-one = not even one step fits here
error-train-steps-too-long = train_steps = { $steps } would take about { $seconds } s here ({ $layers } layers × { $heads } heads over { $n_seq } × { $positions } positions, { $dtype }: about { $per_step } s a step), more than the limit of { $limit } s (max_train_seconds): { $at_most }
error-train-steps-too-long-advice = train_steps = { $steps } would take about { $seconds } s here ({ $layers } layers × { $heads } heads over { $n_seq } × { $positions } positions, { $dtype }: about { $per_step } s a step), more than the limit of { $limit } s (max_train_seconds): { $at_most } ({ $advice })
error-train-more-sizes = fewer layers, heads or positions allows more
error-train-more-sizes-float32 = fewer layers, heads or positions or float32 allow more
error-train-more-text = a shorter text allows more
error-train-more-text-float32 = a shorter text or float32 allow more
error-train-more-float32 = float32 allows more

## A real model's text preview (app/spec/preview.py)

error-preview-past-seq-len = the text gives { $positions } positions, more than seq_len = { $seq_len } of model { $model }
error-preview-takes = the text gives { $positions } positions; model { $model } takes { $most } positions in { $dtype } under this server's trace limit of { $limit } MB (max_trace_bytes)
error-preview-takes-none = the text gives { $positions } positions; model { $model } takes none in { $dtype } under this server's trace limit of { $limit } MB (max_trace_bytes)
error-preview-use-float32 = { $message }: use float32 (up to { $most } positions)
error-preview-shorter-text = { $message }: use a shorter text

## The bug lab in a spec (app/spec/faults.py)

error-quiz-with-faults = a quiz hides its own fault: send faults = [] with quiz, or drop quiz
error-quiz-with-layer = a quiz hides its fault's layer too: drop fault_layer
error-fault-layer = fault_layer must be between 0 and { $last } (the model has { $layers } layer(s)), got { $value }
error-unknown-fault = unknown fault { $fault }; GET /api/faults lists them: { $known }
error-fault-not-applicable = fault { $fault } does not apply to this config: it { $reason }

## A permalink's query (app/spec/query.py)

error-query-field = { $field }: { $reason }
error-query-tokens = tokens must be integers separated by commas
error-query-unknown = unknown parameter { $key }
error-query-optimizer-field = { $field } is an optimizer field: add optimizer=adamw or optimizer=sgd
error-query-not-number = { $field } must be a number, got { $value }

## Uploads (app/checkpoints/upload.py, app/checkpoints/registry.py)

error-upload-too-large = the file is { $size } MB; uploads are limited to { $limit } MB (max_upload_bytes)
error-upload-not-multipart = send the checkpoint as multipart/form-data with one file field named 'file'
error-upload-truncated = the multipart body is malformed or truncated (no closing boundary)
error-upload-file-count = send exactly one file (field 'file'), got { $count }
error-upload-type = { $file } is not a checkpoint type xt reads: send one of { $formats } (a nanoGPT .pt is read without running its pickled code; other PyTorch .pth files are pickles and are never loaded)
error-upload-empty = { $file } is empty
error-upload-expands = { $file } expands to { $size } MB, more than { $limit } MB
error-upload-disk-full = the disk holding { $folder } is full ({ $reason }): nothing was stored. Whoever runs the server can free space there.
error-upload-quota = this server already stores { $stored } MB of uploaded models; this one ({ $size } MB) would pass the limit of { $limit } MB (max_upload_store_bytes). Whoever runs the server can remove old uploads from { $folder }.
error-model-over-limit = the model's { $field } = { $value } is more than this server's limit of { $limit }
error-model-outside-range = the model's { $field } = { $value } is outside this server's range [{ $low }, { $high }]
error-model-params = the model has { $params } parameters, more than this server's limit of { $most }
# the files an upload may be: "xt .safetensors or .npz, or llama2.c .bin"
error-upload-format = { $maker } { $suffixes }
error-upload-or = or
# a real model's file (app/checkpoints/real_models.py): it must be the model its name says
error-real-model-params = { $params } parameters, more than the limit of { $most }
error-real-model-unknown-file = { $file }: not a model file xt reads
