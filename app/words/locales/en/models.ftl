# The models and presets the home page offers (GET /api/models, the home form): their labels,
# descriptions and example texts (app/checkpoints/model_words.py, app/spec/presets.py,
# app/checkpoints/real_models.py). A model's English description is its file's own (its metadata,
# or xt_core's zoo); the English here is the same text, for the other languages to translate.

## The demo models (data/checkpoints: their metadata's description)

model-induction = random letters (drawn with replacement) repeating with a period of 3 to 18, a few copied letters changed at random: the model learns to find the current letter in the latest period and copy the letter that came after it (an induction head, layer 1), whatever the period
model-text = character-level model of the project's small corpus of simple sentences, trained on 30 of its 35 lines (every 7th line held out to measure it)

## The real models (xt models fetch): the description, the tokenizer's name, the example texts

model-smollm2-135m = SmolLM2-135M-Instruct (Hugging Face): a 30-layer Llama, 9 query / 3 kv heads, width 576, vocabulary 49,152 (byte-level BPE); Q4_1 weights, Q8_0 embedding
    .tokenizer = SmolLM2 BPE (from the model file)
    .example-1 = The capital of France is Paris. The capital of Italy is Rome.
    .example-2 = Gradients flow backwards through every layer, one op at a time.
model-fetch-command = make real-model (or: xt models fetch { $model })

## The random-init presets (app/spec/presets.py): the label, the description, a preset's own text

model-preset-tiny-1 = tiny, 1 layer
    .description = 1 layer, 4 heads (2 kv heads), width 64: every picture small enough to read number by number.
model-preset-tiny-2 = tiny, 2 layers
    .description = 2 layers, 4 heads (2 kv heads), width 64: the default.
model-preset-class = class: 4 layers, width 256
    .description = 4 layers, 8 heads, width 256, byte tokenizer, up to 128 positions: the classroom demo.
    .text = Attention is all you need, they said. So the model looked back at every token it had seen, and learned.

## GPT-2 and Qwen

model-gpt2-text = a GPT-2-style model (LayerNorm, GELU, learned position embeddings, biases) of the same small corpus, character-level, trained on the same 30 of its 35 lines as the text model
