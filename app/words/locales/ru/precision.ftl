# A low-precision step's spec fields (app/spec/precision.py)
error-precision-low-only = { $field } задаётся только для шага в bfloat16 или float16, а этот шаг в { $dtype }
error-precision-loss-scale = loss_scale должен быть степенью двойки от 1 до 2^{ $most }, а получено { $value }
error-precision-not-low = трасса { $trace } — шаг в { $dtype }: здоровье чисел сравнивает шаг в bfloat16 или float16 с его двойником во float64 (отправьте её спецификацию с "dtype": "bfloat16" или "float16")
