# Слова внутри рисунков (app/figures/*) и заголовки рисунков шагов (app/steps/residual.py, loss.py,
# jacobian.py, output_softmax.py, update.py): подсказки, примечания о сжатии, легенды, подписи панелей.
# Примечания под рисунком и его таблица чисел — слова помощника steps (steps-figures.ftl).
# Значения $ref и $z — подстановки Plotly («%{y}», «%{z:.7g}»): оставляйте их как есть.

## Тепловая карта, нарисованная блоками (app/figures/pooling.py, style.py, heads.py)

names-figure-pooled-note = Нарисовано: матрица { $rows }×{ $cols } показана ячейками { $cell_rows }×{ $cell_cols }; каждая ячейка — наибольший по модулю элемент своего блока { $block_rows }×{ $block_cols }.
names-figure-grid-note = Уменьшено: матрица { $rows }×{ $cols } каждой головы показана ячейками { $cell_rows }×{ $cell_cols }; каждая ячейка — наибольший по модулю элемент блока { $block_rows }×{ $block_cols }. Щёлкните по голове (или по её кнопке «Увеличить»), чтобы увидеть все значения.
names-figure-hover-pooled = (наибольшее |значение| своего блока)
names-figure-hover-block = блок { $rows }×{ $cols } значений, сжатый в одну ячейку
names-figure-hover-span = { $title } { $ref } и ещё { $more }
names-figure-hover-block-value = { $value } = { $z }, наибольшее |значение| в блоке
names-figure-head = голова { $head }
names-figure-value = значение

## Столбцы и графики (app/figures/basic.py, app/steps/loss.py)

names-figure-mean = среднее = { $mean }
names-figure-loss-title = Потеря на каждой позиции
names-figure-loss-chart-title = Потеря на каждой позиции, −log p(цели); штриховая линия — среднее L по всем позициям
names-figure-loss-value = −log p(цели)
names-figure-position-prediction = позиция: вход→цель

## Таблица чисел под рисунком (app/figures/serialize.py, app/steps/residual.py)

names-figure-numbers-note = Таблица чисел: { $cut }.
names-figure-cut-one = первые { $part }
names-figure-cut-both = первые { $rows } и { $cols }
names-figure-cut-rows = { $shown } из { $total ->
        [one] { $total } строки
       *[other] { $total } строк
    }
names-figure-cut-columns = { $shown } из { $total ->
        [one] { $total } столбца
       *[other] { $total } столбцов
    }
names-figure-cut-positions = { $shown } из { $total ->
        [one] { $total } позиции
       *[other] { $total } позиций
    }
names-figure-cut-features = { $shown } из { $total ->
        [one] { $total } признака
       *[other] { $total } признаков
    }

## Обратный проход остаточной связи (app/figures/panels.py, app/steps/residual.py)

names-figure-residual-title = Градиенты складываются на остаточной связи: градиент тензора «{ $label }»
names-figure-residual-skip = пришёл по обходному пути
names-figure-residual-branch = добавлен ветвью
names-figure-residual-sum = сумма: весь градиент
names-figure-residual-sum-short = сумма

## Рисунки обновления одного параметра оптимизатором (app/steps/update.py)

names-figure-update-delta-title = Обновление ΔW: { $label }
names-figure-update-grad-title = Градиент g: { $label }

## Якобиан строки softmax (app/steps/jacobian.py) и тождество выходного softmax (app/steps/output_softmax.py)

names-jacobian-output-where = выходной софтмакс, позиция { $pos } ({ $label })
names-jacobian-attention-where = слой { $layer }, голова { $head }, запрос { $query }
names-jacobian-recorded-logits = записанный dL/dlogits
names-jacobian-recorded-scores = записанный dL/dscores
names-jacobian-token = токен { $symbol }
names-jacobian-key = ключ { $symbol }
names-jacobian-title = Якобиан софтмакса J = diag(p) − ppᵀ (симметричен: Jᵀ = J): { $where }
names-jacobian-chain = J·dL/dp (цепное правило)
names-jacobian-vectors-title = J·dL/dp и записанный градиент: { $where }
names-jacobian-gradient = градиент
names-identity-title = Сокращение «софтмакс + функция потерь» в позиции { $pos } (вход { $token } → цель { $target }): dL/dlogits = (p − onehot)/N, N = { $n }

## Рисунки шага обновления оптимизатором (app/steps/update.py)

names-update-loss-title = Потеря на этом пакете: { $before } до → { $after } после обновления
names-update-loss-trained-title = Потеря на этом пакете: { $before } до → { $after } после обновления (после { $n } { $n ->
        [one] шага
       *[other] шагов
    } обучения)
names-update-line-search-title = Линейный поиск: L(W − η·g), где W — все параметры, и предсказание первого порядка L − η‖g‖²
names-update-grad-norm-title = Норма градиента ‖g‖ по параметрам (логарифмическая шкала)
names-update-ratio-title = Отношение обновления к весам RMS(ΔW)/RMS(W) по параметрам (логарифмическая шкала)
names-update-too-large = { $ratio }: слишком большой шаг
names-update-expected-label = { $optimizer } при lr { $lr }: { $rule }

## Графики обновления оптимизатором (app/figures/update.py); $x и $y — подстановки Plotly

names-update-hover-expected = ожидается до { $x }
names-update-log-axis = { $value } (логарифмическая шкала)
names-update-parameter = параметр
names-update-steps-before = { $n } { $n ->
        [one] шаг
        [few] шага
       *[many] шагов
    } обучения до этого
names-update-hover-step = шаг { $x }<br>потеря = { $y }
names-update-this-step = этот шаг (шаг { $step }): { $loss }
names-update-hover-this = этот шаг<br>потеря = { $y }
names-update-after = после обновления, тот же пакет: { $loss }
names-update-hover-after = после обновления<br>потеря = { $y }
names-update-steps-axis = шаг обучения на этом пакете
names-update-loss-log-axis = потеря (логарифмическая шкала)
names-update-measured = L(W − η·g), измерено
names-update-hover-eta-loss = η = { $x }<br>потеря = { $y }
names-update-hover-eta-predicted = η = { $x }<br>предсказано = { $y }
names-update-first-order = L − η‖g‖², предсказание первого порядка
names-update-lowest = наименьшая измеренная: η = { $eta }
names-update-eta-axis = размер шага η вдоль −g (логарифмическая шкала)
names-update-loss-axis = потеря на этом пакете

## Графики лаборатории ошибок (app/figures/buglab.py); $step, $op, $error и $verdict подсказки — подстановки Plotly

names-buglab-chart-title = Проверка градиента на каждом шаге: наибольшая относительная ошибка (логарифмическая шкала)
names-buglab-not-run = NaN: проверку выполнить не удалось
names-buglab-passed = пройдена
names-buglab-failed = НЕ ПРОЙДЕНА
names-buglab-hover = шаг { $step }: { $op }<br>наибольшая отн. ошибка { $error } ({ $verdict })
names-buglab-error-name = наибольшая относительная ошибка
names-buglab-phase-forward = прямой проход
names-buglab-phase-loss = функция потерь
names-buglab-phase-backward = обратный проход
names-buglab-phase-update = обновление
names-buglab-tolerance = допуск { $tolerance }
names-buglab-first-failing = первый непройденный: шаг { $step }
names-buglab-step = шаг
names-buglab-error-axis = наибольшая отн. ошибка
names-buglab-faulty = ошибочный обратный проход
names-buglab-correct = верный обратный проход
names-buglab-difference = разность: ошибочный − верный
names-buglab-identical = 0 всюду:<br>совпадают
names-buglab-difference-bar = ошибочный − верный
# Столбцы таблиц чисел шага обновления (app/steps/update.py)
names-update-loss-column = потеря
names-update-measured-column = L(W − η·g)
names-update-first-order-column = L − η‖g‖²
