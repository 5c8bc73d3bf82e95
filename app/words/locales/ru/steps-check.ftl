# Не пройденная проверка градиента шага и его предупреждения о NaN/inf (app/steps/gradcheck.py,
# view.py, update.py, nonfinite.py).

step-check-failed = Проверка градиента не пройдена: относительная ошибка { $error } превышает допуск float64 { $tolerance }.
step-check-failed-twin = Проверка градиента не пройдена: относительная ошибка { $error } превышает допуск float64 { $tolerance } (проверка идёт на двойнике этой трассы во float64).
step-check-fault-hint = {" "}Неисправность из лаборатории ошибок изменила обратный проход: оптимизатор сделал шаг вдоль неверного градиента.

## NaN и ±inf в том, что показывает шаг

step-nonfinite-values = { $tensor } { $count ->
        [one] содержит { $count } значение NaN или бесконечность; оно показано разрывом и отправлено как null.
        [few] содержит { $count } значения NaN или бесконечности; они показаны разрывами и отправлены как null.
       *[other] содержит { $count } значений NaN или бесконечностей; они показаны разрывами и отправлены как null.
    }
step-nonfinite-gradient = dL/d({ $tensor })
step-nonfinite-contribution = вклад в dL/d({ $tensor })
step-nonfinite-updated = Обновлённые веса содержат NaN или бесконечные значения ({ $names }): шаг разошёлся.
step-nonfinite-updated-more = Обновлённые веса содержат NaN или бесконечные значения ({ $names } и ещё { $more }): шаг разошёлся.
step-nonfinite-overflow = Средний квадрат { $tensor } переполнил { $dtype } в { $rows } { $rows ->
        [one] строке
       *[other] строках
    } (значения до { $biggest }): 1/rms стал равен 0, поэтому этот RMSNorm выдаёт там 0 и градиент назад не течёт. Обучение разошлось.

## Баннер расхождения (first_nonfinite в сводке трассы)

step-diverged-training = обучение разошлось (потеря равна NaN/inf начиная с шага обучения { $step } из { $steps }) — попробуйте уменьшить скорость обучения
step-diverged = обучение разошлось — попробуйте уменьшить скорость обучения
step-overflowed = значения вышли за пределы диапазона { $dtype } — попробуйте float64 или веса поменьше
step-overflowed-tensor = { $tensor } (его средний квадрат)
step-unit-values = знач.
step-unit-rows = стр. с переполнением
step-nonfinite-updated-tensor = обновлённый { $tensor }
