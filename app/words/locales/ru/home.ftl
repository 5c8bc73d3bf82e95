# Главная страница (templates/home.html и включаемые в неё шаблоны; static/js/home/*).

home-title = Начало
home-heading = Один шаг обучения, операция за операцией
home-cannot-start = <strong>Не удаётся начать:</strong> { $message }
home-internal-error = Сервер не смог прочитать эту спецификацию (внутренняя ошибка). Попробуйте другой текст или модель.

## Быстрые входы (templates/_home_ways.html)

home-ways = С чего начать
home-way-trained = ▶ Пройти по шагам обученную модель
    .title = Модель, обученная на своей задаче, её пример текста и в конце шаг SGD: каждая операция прямого прохода, функции потерь, обратного прохода и обновления, каждый градиент проверен
home-way-lessons = <strong>Уроки:</strong>
home-way-join = <strong>Войти в класс:</strong>
home-way-join-code = код
home-way-join-button = Войти
home-way-quiz = <strong>Викторина:</strong> найдите ошибку
home-way-real = <strong>Настоящая модель:</strong> { $model }

## Текст, модель, зерно, токенизатор, точность

home-text = Текст
home-examples = Примеры:
# Пример текста на этом языке (строка, которую все знают) — для случайной инициализации.
home-example-quote = Быть или не быть, вот в чём вопрос.
home-text-help = Входы — все токены, кроме последнего; цели — те же токены, сдвинутые на один.
home-tokens = Номера токенов (вместо текста; строки разделяются «;»)
home-model = Модель
home-model-help = Случайные веса из зерна; готовые наборы заполняют размеры.
home-seed = Зерно
home-tokenizer = Токенизатор
home-tokenizer-char = char: по токену на символ
home-tokenizer-byte = byte: по токену на байт UTF-8
home-precision = Точность
home-start = Начать ▶
home-start-help = Дальше: ← → — шаг назад и вперёд, Home/End — к началу и к концу, P — режим показа. Настройки ниже можно не трогать.
home-model-refused = <code>{ $path }</code> (<code>xt serve --model</code>) не удалось открыть: { $reason }
home-model-fetchable = Модели { $model } ({ $description }) на этом сервере нет: выполните <code>{ $command }</code> ({ $size_mb } МБ, один раз) и обновите страницу.

## Список моделей (templates/_model_options.html, static/js/home/model_list.js)

home-models-shipped = Демонстрационные модели (обученные)
home-models-real = Настоящие модели (предобученные)
home-models-served = Модели сервера (xt serve --model)
home-models-uploaded = Загруженные контрольные точки
home-models-random = Случайная инициализация (размеры ниже)
home-models-presets = Случайная инициализация: готовые наборы
home-models-unavailable = Список моделей недоступен ({ $error }); размеры ниже по-прежнему работают.
home-tokenizer-from-file = { $tokenizer } (из файла модели)
home-checkpoint-real = { $description }{ $positions }; размеры модели заданы ею самой.
home-checkpoint = { $description }{ $sizes }; { $tokens }. Размеры модели заданы ею самой.{ $measured }
home-checkpoint-sizes = { $layers } { $layers ->
        [one] слой
        [few] слоя
       *[many] слоёв
    }, голов: { $heads }, ширина { $width }, V = { $vocab }, { $positions }
home-checkpoint-tokenizer = токенизатор { $tokenizer }
home-checkpoint-no-tokenizer = токенизатора нет: только номера токенов
home-measured-induction = Индукционная голова: слой { $layer }, голова { $head } (оценка { $score }).
home-measured-loss = Потери на отложенных предложениях { $heldout } (на обучающих { $train }).
home-measured-sample = Модель пишет: «{ $sample }»

## Сколько позиций принимает контрольная точка (max_positions из GET /api/models)

home-positions-seq-len = до { $count } { $count ->
        [one] позиции
       *[other] позиций
    }
home-positions-none = ни одной
home-positions = { $count } { $count ->
        [one] позиция
        [few] позиции
       *[many] позиций
    }
home-positions-training-same = { $count } { $count ->
        [one] позиция
        [few] позиции
       *[many] позиций
    } ({ $training } с предварительным обучением)
home-positions-with = { $count } с { $optimizer }
home-positions-training-each = { $count } { $count ->
        [one] позиция
        [few] позиции
       *[many] позиций
    } (с предварительным обучением: { $each })
home-positions-no-text = ни один текст не укладывается в предел трассы этого сервера
home-positions-up-to = до { $positions }
home-positions-by-dtype = в float32 до { $float32 }, в float64 до { $float64 } (предел трассы этого сервера)

## Подсчёт токенов на лету (static/js/home/count.js)

home-count = { $tokens } { $tokens ->
        [one] токен
        [few] токена
       *[many] токенов
    } → { $positions } { $positions ->
        [one] позиция
        [few] позиции
       *[many] позиций
    } (входы = tokens[:-1], цели = tokens[1:])
home-count-too-few = нужно хотя бы два токена
home-count-over-seq-len = больше, чем «Макс. позиций» = { $count }
home-count-over-model = больше { $count } { $count ->
        [one] позиции
       *[other] позиций
    }, которые модель принимает { $when }
home-count-over-none = модель не принимает ни одной позиции { $when } при пределах этого сервера
home-when = в { $dtype }
home-when-training = в { $dtype } с предварительным обучением оптимизатором { $optimizer }
home-count-unknown = нет в алфавите модели: { $characters }
home-count-by-server = подсчитано токенизатором { $tokenizer }: { $pieces }
home-count-failed = Не удалось подсчитать токены: { $error }
home-counting = Токенизатор { $tokenizer } считает токены (на сервере)…

## Размеры модели (templates/_config_field.html; CONFIG_FORM в app/routes/pages.py)

home-sizes = Размеры модели (случайная инициализация)
home-sizes-more = Ещё: словарь, общие веса эмбеддингов, θ RoPE, ε
home-yes = да
home-no = нет
home-automatic = автоматически
home-field-n_layer = Слои
    .help = блоки трансформера
home-field-n_head = Головы запросов
home-field-n_kv_head = Головы ключей и значений
    .help = меньше, чем голов запросов, — групповое внимание (GQA)
home-field-n_embd = Ширина C
    .help = n_embd: должна делиться на число голов
home-field-ffn_hidden = Скрытая ширина FFN
home-field-seq_len = Макс. позиций
    .help = seq_len: в тексте не больше seq_len + 1 токенов
home-field-vocab_size = Размер словаря
    .help = пусто — автоматически (256 для byte, символы текста для char)
home-field-tie_embeddings = Общие веса эмбеддингов
    .help = логиты считаются той же матрицей эмбеддингов токенов
home-field-rope_theta = θ RoPE
    .help = основание поворотов
home-field-norm_eps = ε RMSNorm

## Шаг обновления и обучение перед ним (templates/_training_fields.html, static/js/home/training.js)

home-training = Шаг обновления и обучение
home-optimizer = Оптимизатор
home-optimizer-none = нет: только прямой и обратный проход
home-optimizer-with-update = { $optimizer }: в конце его шаг обновления
home-optimizer-help = Последний шаг показывает ΔW, отношения обновления к весам и линейный поиск.
home-lr = Скорость обучения
home-lr-blank = пусто: { $defaults }
home-train-first = Сначала обучить
home-train-steps = 0–{ $most } { $most ->
        [one] шаг
        [few] шага
       *[many] шагов
    } оптимизатора на этом тексте до того шага, который вы смотрите
home-train-none = Без предварительного обучения: даже один шаг этой модели на этом тексте не укладывается в предел времени сервера.
home-train-unknown = Сколько шагов оптимизатора поместится, сервер скажет, когда текст подойдёт к этой модели
home-train-optimizer = ({ $optimizer }, lr { $lr }).
home-train-optimizer-random = ({ $optimizer }, lr { $lr }); при больших размерах — меньше.

## Лаборатория ошибок (templates/_buglab_picker.html, static/js/home/buglab_picker.js)

home-buglab = Лаборатория ошибок: сломайте обратный проход нарочно
home-backward = Обратный проход
home-fault-none = верный: без ошибки
home-fault-quiz = викторина: спрятать случайную ошибку, чтобы я её нашёл
home-fault-plant = внести известную ошибку
home-fault-help = Каждая ошибка заменяет обратный проход одной операции типичной ошибкой; проверка градиента по-прежнему измеряет настоящую функцию потерь, поэтому впервые она не проходит именно там.
home-fault-quiz-help = Сервер выберет одну из ошибок, подходящих к этим размерам, и спрячет её. Пройдите обратный проход по шагам, найдите шаг, где градиент впервые становится неверным, и нажмите там «Этот шаг сломан».
home-fault-not-here = Не при этих размерах: { $reason }.
home-fault-not-here-short = { $fault } (не при этих размерах)
home-fault-layer = В слое
home-fault-layer-last = последнем
home-fault-layer-help = пусто — последний слой, ближайший к функции потерь

## Загрузка (templates/_upload.html, static/js/home/upload.js)

home-upload = Своя контрольная точка
home-upload-file = Файл контрольной точки
home-upload-format-first = { $maker } { $suffixes }
home-upload-format-more = , или { $maker } { $suffixes }
home-upload-or = или
home-upload-help = { $formats }; не больше { $size_mb } МБ (<code>xt train --task text --out model.safetensors</code> запишет такой файл). Файл хранится под своим sha256; ничего никогда не распаковывается через pickle.
home-upload-button = Загрузить
home-upload-choose = Сначала выберите файл контрольной точки.
home-upload-busy = Загрузка { $file }…
home-upload-added = Добавлена модель { $model }: она выбрана в списке моделей выше.
home-upload-refused = Не принято: { $error }
home-upload-failed = Загрузка не удалась: { $error }

## GPT-2 and Qwen
# семейство модели, которое считает случайная инициализация (templates/_family_field.html)

home-field-family = Семейство модели
    .help = из каких операций состоит модель; размеры задаются теми же полями
home-field-family-llama = Llama (RMSNorm, RoPE, SwiGLU)
home-field-family-gpt2 = GPT-2 (LayerNorm, GELU, обучаемые позиции, смещения)
