# The words inside a step's rules (LaTeX \text{...}: app/steps/formulas.py).

step-formula-keys-alike = keys alike
step-formula-queries-alike = queries alike
step-formula-rotate-back = rotate back
step-formula-for = for
step-formula-every = every
step-formula-also = also
step-formula-a-matrix = (a matrix)
step-formula-a-norm-gain = (a norm gain)

## GPT-2 and Qwen

step-formula-each-head = each head
step-formula-of = of
step-formula-or = or
