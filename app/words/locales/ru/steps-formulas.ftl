# Слова внутри правил шага (LaTeX \text{...}: app/steps/formulas.py).

step-formula-keys-alike = для ключей так же
step-formula-queries-alike = для запросов так же
step-formula-rotate-back = поворот обратно
step-formula-for = при
step-formula-every = любой
step-formula-also = в том числе
step-formula-a-matrix = (матрица)
step-formula-a-norm-gain = (коэффициент нормы)

## GPT-2 and Qwen

step-formula-each-head = каждая голова
step-formula-of = из
step-formula-or = или
