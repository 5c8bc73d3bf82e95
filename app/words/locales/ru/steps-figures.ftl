# Подписи под рисунками шага и слова их таблиц чисел (app/steps/context.py, tensors.py,
# residual.py, output_softmax.py, jacobian.py). Заголовки рисунков и осей — в каталоге names.

step-numbers-rows = Числа: первые { $rows } из { $of_rows } { $of_rows ->
        [one] строки
       *[other] строк
    }.
step-numbers-columns = Числа: первые { $columns } из { $of_columns } { $of_columns ->
        [one] столбца
       *[other] столбцов
    }.
step-numbers-rows-columns = Числа: первые { $rows } из { $of_rows } { $of_rows ->
        [one] строки
       *[other] строк
    } и { $columns } из { $of_columns } { $of_columns ->
        [one] столбца
       *[other] столбцов
    }.
step-note-download = Скачайте тензор, чтобы получить все значения.
step-note-masked = Замаскированные (будущие) ключи содержат −∞ и оставлены пустыми.

## Обратный проход сложения остаточной связи: остаточная связь, ветвь и сумма рядом

step-residual-column-skip = обход
step-residual-column-branch = ветвь
step-residual-column-sum = сумма
step-residual-note = Числа: пришедшее по остаточной связи (обход), ветвь и сумма рядом для каждого признака (обход + ветвь = сумма в каждой строке).
step-residual-note-positions = Числа: пришедшее по остаточной связи (обход), ветвь и сумма рядом для первых { $positions } из { $of_positions } { $of_positions ->
        [one] позиции
       *[other] позиций
    } (обход + ветвь = сумма в каждой строке).
step-residual-note-features = Числа: пришедшее по остаточной связи (обход), ветвь и сумма рядом для первых { $features } из { $of_features } { $of_features ->
        [one] признака
       *[other] признаков
    } (обход + ветвь = сумма в каждой строке).
step-residual-note-positions-features = Числа: пришедшее по остаточной связи (обход), ветвь и сумма рядом для первых { $positions } из { $of_positions } { $of_positions ->
        [one] позиции
       *[other] позиций
    } и { $features } из { $of_features } { $of_features ->
        [one] признака
       *[other] признаков
    } (обход + ветвь = сумма в каждой строке).

## Тождество выходного softmax (p − onehot)/N и якобиан строки softmax

step-target-label = { $token } (цель)
step-identity-recorded = записанный dL/dlogits
step-identity-largest = Наибольшее значение |dL/dlogits − (p − onehot)/N| по всем { $positions } { $positions ->
        [one] позиции
       *[other] позициям
    } и { $tokens } { $tokens ->
        [one] токену
       *[other] токенам
    }: { $error }.
step-identity-shown = { $count ->
        [one] Показан { $count } самый вероятный токен и цель.
        [few] Показаны { $count } самых вероятных токена и цель.
       *[other] Показаны { $count } самых вероятных токенов и цель.
    }
step-identity-not-finite = p или dL/dlogits содержит NaN или бесконечные значения: тождество проверить нельзя.
step-identity-deviates = dL/dlogits отклоняется от (p − onehot)/N до { $error }.
step-jacobian-output-note = { $count ->
        [one] Показан { $count } самый вероятный токен и цель; проверка охватывает всю строку.
        [few] Показаны { $count } самых вероятных токена и цель; проверка охватывает всю строку.
       *[other] Показаны { $count } самых вероятных токенов и цель; проверка охватывает всю строку.
    }
step-jacobian-attention-note = Ключи 0..{ $pos }: более поздние ключи замаскированы, их p равна 0, и они не участвуют.
