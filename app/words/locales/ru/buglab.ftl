# Слова лаборатории ошибок (app/buglab): каждая ошибка каталога (xt_core/lab/faults.py хранит её
# структуру: шаг, который она ломает, и две строки кода) по её идентификатору; сравнение с верным.

## Каталог: buglab-fault-<id>, её .description и, где нужно условие, .reason

buglab-fault-softmax_ce_normalized_twice = двойная нормировка в softmax-CE
    .description = Градиент softmax-CE ещё раз делится на знаменатель softmax, хотя p уже нормирована.
buglab-fault-attention_out_reads_dres = выходная проекция внимания читает dres
    .description = Выходная проекция внимания читает градиент выхода слоя (dres) вместо dh — градиента в h = x + внимание, в котором уже есть вклад ветви FFN.
    .reason = нужны проекции без смещений (qkv_bias = o_bias = false)
buglab-fault-rope_forward_rotation = прямой поворот RoPE в обратном проходе
    .description = Обратный проход RoPE поворачивает на +угол (прямой поворот R) вместо транспонированного R^T.
    .reason = нужна модель семейства llama (family = llama)
buglab-fault-batch_mean_missing = забыто среднее по батчу
    .description = Забыто среднее по N позициям: каждый градиент в N раз больше нужного.
buglab-fault-batch_mean_twice = среднее по батчу дважды
    .description = Среднее по N позициям взято дважды: каждый градиент в N раз меньше нужного.
buglab-fault-tied_embedding_one_contribution = один вклад в связанные эмбеддинги
    .description = При связанных эмбеддингах градиент выходного слоя (LM head) не добавляется в tok_embeddings: приходит только вклад поиска по таблице.
    .reason = нужны связанные эмбеддинги (tie_embeddings = true)
buglab-fault-rmsnorm_missing_projection = RMSNorm без проекционного члена
    .description = Обратный проход RMSNorm считает 1/rms константой и теряет проекционный член - xhat * mean(xhat * dxhat).
    .reason = нужна модель семейства llama (family = llama)
buglab-fault-softmax_missing_sum_term = softmax без суммы в якобиане
    .description = Обратный проход softmax внимания оставляет только p * dp = diag(p) @ dp и отбрасывает всю часть - p p^T якобиана J = diag(p) - p p^T: член - p * sum(p * dp).
buglab-fault-attention_scale_missing = забыт масштаб внимания
    .description = В обратном проходе забыт масштаб оценок 1/sqrt(hd).
buglab-fault-swiglu_silu_for_derivative = silu вместо производной в SwiGLU
    .description = SwiGLU в обратном проходе умножает на silu(gate) там, где нужна её производная silu'(gate).
    .reason = нужна модель семейства llama (family = llama)
buglab-fault-gqa_kv_not_summed = градиенты kv в GQA не сложены
    .description = При групповом внимании запросов градиент головы значений берётся только от первой головы запросов её группы, а не суммой по всем головам, которые её делят.
    .reason = нужно групповое внимание запросов (n_kv_head < n_head)
buglab-fault-linear_dw_transposed = транспонированный dW линейного слоя
    .description = dW вычислен как dY^T X вместо X^T dY: у квадратной wq формы всё ещё сходятся, но значения транспонированы.
    .reason = нужны проекции без смещений (qkv_bias = o_bias = false)

## GPT-2 and Qwen

buglab-fault-layernorm_missing_mean = LayerNorm без члена среднего
    .description = Обратный проход LayerNorm забывает, что среднее μ зависит от каждого x_j, и теряет член среднего - mean(dxhat): dx перестаёт давать ноль в сумме по признакам позиции.
    .reason = нужна модель семейства GPT-2 (family = gpt2)
buglab-fault-bias_grad_one_row = градиент смещения из одной строки
    .description = Смещение выхода полносвязного блока b2 получает градиент одной строки (последней позиции) вместо суммы по всем B·T строкам, хотя прибавлялось в каждой позиции каждой последовательности.
    .reason = нужна модель семейства GPT-2 со смещениями в полносвязном блоке (family = gpt2, mlp_bias = true)

# выбор на домашней странице: ошибка и шаг, в котором она
buglab-fault-option = { $fault } — в шаге: { $op }

## Ошибочный против верного (GET .../steps/{ "{" }index{ "}" }/diff)

buglab-diff-arriving-wrong = Градиент, пришедший в эту операцию, уже неверен: ошибка случилась раньше в обратном проходе (в шаге, который выполнялся до этого), а эта операция лишь передаёт её дальше.
buglab-diff-this-op = Пришедший сюда градиент в точности верен, но то, что эта операция из него вычисляет ({ $tensors }), — нет: сломан обратный проход этой операции.
buglab-diff-all-right = Каждый градиент этого шага в точности верен: ошибка, если она есть, будет дальше в обратном проходе.
buglab-diff-title-arriving = dL/d({ $name }), пришедший градиент: ошибочный против верного
buglab-diff-title-contribution = dL/d({ $name }), вклад этой операции: ошибочный против верного
buglab-diff-identical = Совпадают бит в бит: разность везде равна 0.
buglab-diff-differ = Различаются: max |ошибочный − верный| = { FORMAT($diff, spec: ".3g") } при наибольшем |верном| значении { FORMAT($largest, spec: ".3g") }.
buglab-diff-head = Голова { $head } из { $heads }: та, где ошибочный и верный различаются сильнее всего.
buglab-diff-head-same = Показана голова 0 из { $heads }: все головы одинаковы.
buglab-diff-numbers = Числа: ошибочный − верный.

# все пробы ученика в викторине потрачены (409)
buglab-probes-spent = пробы в этой викторине закончились: потрачены все { $most } (шаги { $steps }); ответьте на викторину, чтобы увидеть все проверки
