# A low-precision step's spec fields (app/spec/precision.py)
error-precision-low-only = { $field } задаётся только для шага в bfloat16 или float16, а этот шаг в { $dtype }
error-precision-loss-scale = loss_scale должен быть степенью двойки от 1 до 2^{ $most }, а получено { $value }
error-precision-not-low = трасса { $trace } — шаг в { $dtype }: здоровье чисел сравнивает шаг в bfloat16 или float16 с его двойником во float64 (отправьте её спецификацию с "dtype": "bfloat16" или "float16")

# The update step of a low-precision training step the dynamic loss scaler skipped (app/steps/update.py)
precision-update-skipped = Обновление на этом шаге пропущено: градиент переполнил { $dtype } при масштабе функции потерь 2^{ $exponent }, поэтому динамический масштабировщик оставляет веса и состояние оптимизатора прежними (ΔW = 0) и уменьшает масштаб вдвое, до 2^{ $next }, для следующего шага.

# The gradient check of a bfloat16 or float16 step (static/js/walk/gradcheck_view.js)
js-precision-check-roundoff = Эта трасса в { $dtype } (мастер-веса во float32, каждая операция округляется, как сказано в таблице точности): проверка выполняется на том же шаге, вычисленном в float64 (те же веса, токены и ошибки). Градиент { $dtype } на экране отличается от него на { $roundoff } (ошибка округления формата, а не неверный градиент).
js-precision-check-overflowed = Эта трасса в { $dtype }, и её значения на этом шаге переполнились до inf или NaN. Тот же шаг, вычисленный в float64 (те же веса, токены и ошибки), проверку проходит: правило обратного прохода верно, неверны числа { $dtype } на экране (слишком большой масштаб функции потерь или значения за пределами диапазона формата).
js-precision-check-badge-broken = проверка { $what } { $verdict } макс. отн. ошибка { $error } (допуск { $tolerance }) · значения { $dtype } здесь — NaN/inf
