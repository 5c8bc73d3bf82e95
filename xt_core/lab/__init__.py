"""The lab: planting mistakes, writing a backward yourself, and measuring a trained model.

faults.py      the bug lab's catalogue: one op's backward swapped for a classic mistake
exercise.py    write one op's backward and check it, Backprop-Ninja style
probes.py      what a trained model does (its induction head)
generation.py  continuing a prompt, the loss on held-out text
tasks.py       the demo models' tasks: config, tokenizer, batches, what to measure
quiz_weights.py a quiz's own weights, drawn from a seed only the server knows
"""
