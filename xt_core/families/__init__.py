"""Model families: each is a model script of op calls (<family>.py: its parameters' shapes and its
tape) and its rows of the table of recorded tensors (<family>_names.py, read through
xt_core/names.py), chosen by the config's `family` (registry.py). Llama is the one family today;
docs/adding-a-family.md says what a second one touches."""
