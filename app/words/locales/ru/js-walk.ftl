# Скрипт страницы пошагового прохода: вид шага (static/js/walk/step_view.js), лента шагов,
# навигация и «перейти к» (static/js/walk/timeline.js, navigation.js, jump.js).

js-phase-forward = прямой
js-phase-loss = потери
js-phase-backward = обратный
js-phase-update = обновление
js-step-rule-forward = Прямой проход
js-step-rule-backward = Обратный проход
js-step-rule-update = Обновление
js-step-rule-this = { $rule } · этот шаг
js-step-rules-toggle = Формы, все формулы
    .title = Формы тензоров и каждое правило целиком (прямой и обратный проход)
js-step-shapes = Формы
js-step-warning = Предупреждение:
js-step-warnings = Предупреждения:
js-step-click-row = Нажмите на строку, чтобы увидеть якобиан её софтмакса.
js-step-no-figure = Для этого шага нет графика.
js-timeline-step = Шаг { $number }: { $title } ({ $phase })
js-timeline-group = { $group }, { $phase }: { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    }
js-timeline-group-open = { $group } (нажмите, чтобы открыть)
js-timeline-steps-unit = { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    }
js-nav-direction-forward = ↓ прямой проход: активации текут вниз
js-nav-direction-loss = ↓ функция потерь: насколько ошиблись предсказания?
js-nav-direction-backward = ↑ обратный проход: градиенты текут вверх
js-nav-direction-update = обновление параметров: w ← w − шаг
js-nav-counter-step = шаг { $number }
js-nav-counter-of = из { $count }
js-nav-announce = { $step }, из { $count }
js-jump-forward = Прямой проход
js-jump-loss = Функция потерь
js-jump-backward = Обратный проход
js-jump-update = Обновление
js-jump-op-backward = { $op } — обратный проход
js-training-start = Обучение: { $total } { $total ->
        [one] шаг
        [few] шага
       *[many] шагов
    } на этом батче, затем записываемый шаг…
js-training-progress = Обучение: шаг { $done } из { $total } ({ $seconds } с)…
js-training-progress-loss = Обучение: шаг { $done } из { $total }, потери { $loss } ({ $seconds } с)…
js-training-diverged = NaN/inf (обучение разошлось)
js-training-trained = сначала { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    } обучения на этом батче: потери { $first } → { $loss }
js-training-trained-after = сначала { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    } обучения на этом батче: потери { $first } → { $loss }; обновление этого шага приводит их к { $after }
js-training-none = до этого шага обучения не было
js-training-none-after = до этого шага обучения не было; обновление этого шага приводит потери к { $after }
js-training-link = обучение: { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    }…
js-training-loading = загрузка…
js-walk-step-failed = шаг { $number } не удалось загрузить: { $error }
js-walk-no-plotly = библиотека графиков (Plotly.js) не загрузилась; перезагрузите страницу
js-walk-trace-failed = шаг обучения не удалось выполнить: { $error }
js-walk-loss-infinite = NaN или бесконечность (средняя перекрёстная энтропия)
js-walk-loss = { $loss } (средняя перекрёстная энтропия)
js-walk-start-failed = страница не смогла запуститься: { $error }
js-error-something = Что-то пошло не так:
js-error-retry = Повторить
js-shape-scalar = скаляр
js-update-loss = потери на этом батче { $before } → { $after }
js-update-norm = ‖g‖ по всем параметрам { $norm }
js-update-after-training = после { $steps } { $steps ->
        [one] шага
       *[other] шагов
    } обучения
js-update-param = { $name } ({ $shape }): отношение { $ratio }
js-update-failed = не удалось загрузить { $name }: { $error }
js-update-choose = ΔW и градиент параметра
js-diverged = Начиная с шага { $number } ({ $name }, { $phase }) значения содержат NaN/inf: { $advice }. Впервые — в { $tensor } ({ $count } { $unit }).
js-diverged-values = Начиная с шага { $number } ({ $name }, { $phase }) значения содержат NaN/inf: { $advice }. Впервые — в { $tensor } ({ $count } { $count ->
        [one] значение
        [few] значения
       *[many] значений
    }).
js-diverged-go = Перейти к шагу { $number }
js-diverged-cell = { $step } — здесь впервые появляются NaN/inf
js-enlarge-loading = Уменьшенный обзор; загружаются все значения этой головы…
js-enlarge-failed = Уменьшенный обзор: все значения загрузить не удалось ({ $error }).
js-enlarge-full = Все значения этой головы: { $rows }×{ $cols }, в собственной цветовой шкале.
js-find-no-number = Шага { $query } нет: шаги идут с 1 по { $count }.
js-find-no-match = Ни один шаг не подходит под «{ $query }»: попробуйте слова из названия («слой 1 софтмакс») или номер шага.
js-find-placeholder = напр. слой 1 вероятности
js-find-label = Найти шаг
js-jacobian-sealed = До вашего ответа викторина не показывает записанный { $recorded } рядом с J · dL/dp: сравните их сами с тепловой картой шага выше или потратьте на этот шаг пробу.
js-jacobian-ok = цепное правило ✓
js-jacobian-bad = цепное правило ✗
js-jacobian-matches = J · dL/dp совпадает с записанным { $recorded }: макс. абс. ошибка { $abs }, макс. отн. ошибка { $rel }
js-jacobian-differs = J · dL/dp НЕ совпадает с записанным { $recorded }: макс. абс. ошибка { $abs }, макс. отн. ошибка { $rel }
js-jacobian-recorded = записанный { $gradient }
js-jacobian-difference = разность
js-jacobian-rows-sealed = Построчно: J · dL/dp, вычисленный из p и dL/dp
js-jacobian-rows = Построчно: цепное правило рядом с записанным градиентом
js-jacobian-numbers = Числа проверки якобиана
js-jacobian-key = ключ
js-jacobian-head = Голова
js-jacobian-head-option = голова { $head }
js-jacobian-position = Позиция
js-jacobian-query-position = Позиция запроса
js-jacobian-show = Показать якобиан
js-jacobian-heading = Якобиан софтмакса для одной строки
js-jacobian-hint-output = Нажмите на строку (позицию) тепловой карты выше или выберите позицию:
js-jacobian-hint = Нажмите на строку запроса тепловой карты внимания выше или выберите голову и позицию запроса:
js-jacobian-heading-output = Якобиан софтмакса в позиции { $pos }
js-jacobian-heading-row = Якобиан софтмакса: слой { $layer }, голова { $head }, позиция запроса { $pos }
js-jacobian-computing = Вычисляется якобиан…
js-figure-plot = { $title } (график)
js-numbers-axis-sequence = последовательность
js-numbers-axis-head = голова
js-numbers-axis-kv-head = kv-голова
js-numbers-axis-position = позиция
js-numbers-axis-token = токен
js-numbers-axis-feature = признак
js-numbers-axis = ось { $axis }
js-numbers-not-finite = не конечное
js-numbers-page = строки { $first }–{ $last } из { $rows }, столбцы { $firstColumn }–{ $lastColumn } из { $columns }
js-numbers-page-at = строки { $first }–{ $last } из { $rows }, столбцы { $firstColumn }–{ $lastColumn } из { $columns } в [{ $at }]
js-numbers-region = числа тензора
js-numbers-jump-kind = перейти к
js-numbers-jump-row = строке
js-numbers-jump-column = столбцу
js-numbers-jump-token = токену (строки, затем столбцы)
js-numbers-jump-token-columns = токену (столбцы)
js-numbers-jump-value = строка, столбец или токен
js-numbers-copied = { $count ->
        [one] скопировано { $count } значение
        [few] скопировано { $count } значения
       *[many] скопировано { $count } значений
    } в формате CSV
js-numbers-previous-rows = предыдущие строки
js-numbers-next-rows = следующие строки
js-numbers-previous-columns = предыдущие столбцы
js-numbers-next-columns = следующие столбцы
js-numbers-jump = Перейти к
js-numbers-go = Перейти
    .label = перейти
js-numbers-copy = Копировать CSV
    .label = скопировать выбранные ячейки (shift-клик расширяет выбор; без выбора — страницу) как CSV
js-keys-next = →  Пробел  Page Down
    .what = следующий шаг; в уроке — его следующая остановка
js-keys-back = ←  Shift+Пробел  Page Up
    .what = предыдущий шаг; в уроке — его предыдущая остановка
js-keys-ends = Home  End
    .what = первый и последний шаг
js-keys-present = P
    .what = режим показа (Esc — выход)
js-keys-blank = B  .
    .what = затемнить экран (любая клавиша возвращает его)
js-keys-help = ?
    .what = этот список
js-keys-close = Закрыть
js-keys-title = Клавиши
js-tokens-position = позиция { $pos }
js-tokens-pos = поз.
js-tokens-input = вход
js-tokens-target = цель
js-nav-layer = слой { $layer }
