"""Model families: each is a model script of op calls (<family>.py: its parameters' shapes and its
tape) and its rows of the table of recorded tensors (<family>_names.py, read through
xt_core/names.py), chosen by the config's `family` (registry.py): Llama (llama.py) and GPT-2 (gpt2.py);
docs/adding-a-family.md says what a family touches."""
