"""Text: tokenizers and the corpus the demo models learn from.

byte_char.py  byte-level and character-level tokenizers (xt's own)
bpe.py        byte-level BPE from a GGUF file's metadata, run by the `tokenizers` library
corpus.py     the induction task's tokens and the shipped corpus (corpus.txt)
"""
