# Отказы API, которые видит страница (`msg` или `detail` ответа 4xx). Их `loc` и `type` от языка
# не зависят: их читают программы. Значения — то, что прислал клиент, имена полей и код, как есть.

## Значения внутри сообщений

error-integer-of-bits = целое число длиной { $bits } { $bits ->
        [one] бит
        [few] бита
       *[many] бит
    }
error-kind-string = строка
error-kind-boolean = true/false
error-kind-number = число
error-kind-list = список

## Значение поля (app/errors.py, app/spec/schema.py)

error-not-a-boolean-number = нужно число, а не { $value }
error-not-a-boolean = нужно true или false, а не { $value }
error-not-an-object = { $field } должно быть объектом вида { $form }, а получено: { $kind }
error-not-an-object-hinted = { $field } должно быть объектом вида { $form } { $hint }, а получено: { $kind }
error-hint-optimizer-name = (name — "adamw" или "sgd")
error-between = { $field } должно быть от { $low } до { $high }, получено { $value }
error-out-of-range = { $field } должно быть от 0 до { $last } ({ $why }), получено { $value }
error-lone-surrogate = в позиции { $index } стоит одиночный суррогат (половина пары UTF-16), а не символ
error-value-error = Неверное значение: { $reason }

## Тело запроса и сервер (app/main.py)

error-body-not-json = тело запроса — не JSON ({ $reason })
error-body-not-json-type = пришлите тело как application/json, а не { $sent }
error-more-errors = … и ещё { $count } { $count ->
        [one] ошибка
        [few] ошибки
       *[many] ошибок
    }
error-internal = внутренняя ошибка: сервер записал её в журнал; пожалуйста, сообщите, что вы делали

## Сообщения pydantic

error-pydantic-missing = поле обязательно
error-pydantic-extra-forbidden = такого поля нет: лишние поля не принимаются
error-pydantic-int-type = нужно целое число
error-pydantic-int-parsing = нужно целое число, а строку не удалось прочитать как целое число
error-pydantic-int-from-float = нужно целое число, а получено число с дробной частью
error-pydantic-float-type = нужно число
error-pydantic-float-parsing = нужно число, а строку не удалось прочитать как число
error-pydantic-finite-number = нужно конечное число
error-pydantic-bool-type = нужно логическое значение (true или false)
error-pydantic-bool-parsing = нужно логическое значение (true или false), а это значение не удалось прочитать
error-pydantic-string-type = нужна строка
error-pydantic-string-unicode = нужна строка, а данные не удалось прочитать как строку Юникода
error-pydantic-string-too-long = строка должна быть не длиннее { $max_length } символов
error-pydantic-string-too-short = строка должна быть не короче { $min_length } символов
error-pydantic-list-type = нужен список
error-pydantic-dict-type = нужен объект (словарь)
error-pydantic-model-type = нужен объект (словарь) вида { $class_name }
error-pydantic-too-long = { $field_type }: не больше { $max_length } элементов, а получено { $actual_length }
error-pydantic-literal-error = допустимые значения: { $expected }
error-pydantic-greater-than-equal = значение должно быть не меньше { $ge }
error-pydantic-greater-than = значение должно быть больше { $gt }
error-pydantic-less-than-equal = значение должно быть не больше { $le }
error-pydantic-less-than = значение должно быть меньше { $lt }

## Отказы xt_core, которые видит страница (app/spec/core_words.py)

error-core-embd-by-heads = n_embd ({ $width }) должно делиться на n_head ({ $heads }) нацело
error-core-heads-by-kv = n_head ({ $heads }) должно делиться на n_kv_head ({ $kv_heads }) нацело
error-core-head-dim-odd = head_dim = { $width } должно быть чётным: RoPE поворачивает пары координат (2i, 2i+1)
error-core-derived-head-dim-odd = head_dim = n_embd / n_head = { $width } должно быть чётным: RoPE поворачивает пары координат (2i, 2i+1)
error-core-positive-finite = { $field } должно быть положительным конечным числом, получено { $value }
error-core-positive = { $field } должно быть положительным, получено { $value }
error-core-family = family должно быть одним из: { $known }; получено { $value }
error-core-part = { $field } = { $value } не вычисляется в семействе { $family }: оно вычисляет { $known }
error-core-char-not-in-alphabet = символа { $char } в позиции { $position } нет в словаре токенизатора

## Размеры, текст и токены спецификации (app/spec/resolve.py)

error-config-params = у этой конфигурации параметров: { $params }, а предел — { $most }
error-byte-vocab = байтовому токенизатору нужен vocab_size >= 256, получено { $vocab_size }
error-text-alphabet = в тексте { $chars } { $chars ->
        [one] различный символ
        [few] различных символа
       *[many] различных символов
    }, это больше, чем vocab_size = { $vocab_size }
error-token-rows = не больше { $most } { $most ->
        [one] последовательности
       *[other] последовательностей
    }, получено { $rows }
error-token-rows-ragged = все строки tokens должны быть одной длины
error-trace-bytes = построение этой трассы заняло бы около { $mb } МБ ({ $n_seq } { $n_seq ->
        [one] последовательность
        [few] последовательности
       *[many] последовательностей
    } × { $positions } поз., { $layers } сл. × { $heads } гол., { $dtype }), это больше предела в { $limit } МБ ({ $setting }): { $advice }
error-advice-smaller = возьмите меньше позиций, последовательностей, слоёв или голов
error-advice-fewer-tokens = дайте меньше токенов
error-advice-shorter-text = возьмите текст короче
error-advice-float32 = выберите float32
error-advice-fewer-tokens-or-untrained = дайте меньше токенов или уберите предварительные шаги обучения (трасса во float32 без них берёт веса модели, не копируя их)
error-advice-shorter-text-or-untrained = возьмите текст короче или уберите предварительные шаги обучения (трасса во float32 без них берёт веса модели, не копируя их)
error-advice-float32-or-untrained = выберите float32 или уберите предварительные шаги обучения (трасса во float32 без них берёт веса модели, не копируя их)
error-limit-cache-bytes = cache_bytes, на все трассы вместе
error-random-init-bpe = у случайной инициализации нет токенизатора "bpe" (его приносит реальная модель): выберите "char" или "byte"
error-text-empty = текст пуст: введите хотя бы два символа
error-too-few-tokens = нужно хотя бы 2 токена (входы — ids[:-1], цели — ids[1:]), получено { $count }
error-too-many-tokens = { $count } { $count ->
        [one] токен даёт
        [few] токена дают
       *[many] токенов дают
    } T = { $positions } поз., это больше, чем seq_len = { $seq_len }
error-token-ids = номера токенов должны лежать в [0, vocab_size = { $vocab_size }), получены номера от { $low } до { $high }
error-text-and-tokens = дайте text или tokens, но не оба сразу
error-whose-random-init = которые принимает случайная инициализация (max_seq_len = { $seq_len })
error-build-bytes-random-init = построение этой трассы заняло бы около { $mb } МБ (шаги обучения и состояние оптимизатора вместе с записанным шагом), это больше предела в { $limit } МБ ({ $setting }): возьмите меньше позиций, слоёв или голов, SGD без момента или уберите предварительные шаги обучения
error-build-bytes-model = построение этой трассы заняло бы около { $mb } МБ (шаги обучения и состояние оптимизатора вместе с записанным шагом), это больше предела в { $limit } МБ ({ $setting }): возьмите текст короче, SGD без момента или уберите предварительные шаги обучения

## Модель спецификации (app/spec/checkpoint.py)

error-models-available = доступны: { $names }
error-no-models = контрольные точки не установлены; укажите null для случайной инициализации
error-unknown-model = неизвестная модель { $model }; их список даёт GET /api/models ({ $listing })
error-model-unusable = модель { $model } нельзя использовать: { $reason }
error-model-unreadable = модель { $model } не читается: { $reason }
error-model-fixes-config = модель { $model } сама задаёт конфигурацию ({ $field } = { $value }): уберите config.{ $field } или выберите случайную инициализацию (model null), чтобы задать размеры
error-text-too-long = текст даёт не меньше { $at_least } поз., это больше { $most } поз., { $whose }
error-whose-model = которые принимает модель { $model } (seq_len = { $seq_len })
error-model-tokenizer = модель { $model } использует токенизатор { $own }, а не { $requested }: пришлите "{ $own }" или уберите поле
error-model-no-tokenizer-asked = у модели { $model } нет токенизатора, а запрошен { $requested }: уберите поле и дайте номера токенов
error-model-no-tokenizer = у модели { $model } нет токенизатора (импортированные веса): дайте номера токенов
error-text-outside-alphabet = { $reason } модели { $model }; её символы: { $chars }
error-text-unencodable = { $reason } модели { $model }

## Обучение перед шагом (app/spec/training.py)

error-optimizer-name = имя оптимизатора должно быть "sgd" или "adamw", получено { $value }
error-optimizer-field = у { $name } нет поля { $field }; его поля: { $known }
error-optimizer-not-number = { $field } должно быть числом, получено { $value }
error-optimizer-not-finite = { $field } должно быть конечным числом, получено { $value }
error-train-steps-range = train_steps должно быть от 0 до { $most } (max_train_steps), получено { $value }
error-train-at-most = здесь помещается не больше { $most } { $most ->
        [one] шага
       *[other] шагов
    }
error-train-not-one = здесь не помещается ни одного шага
error-train-steps-too-long = train_steps = { $steps } заняли бы здесь около { $seconds } с ({ $layers } сл. × { $heads } гол. на { $n_seq } × { $positions } поз., { $dtype }: около { $per_step } с на шаг), это больше предела в { $limit } с (max_train_seconds): { $at_most }
error-train-steps-too-long-advice = train_steps = { $steps } заняли бы здесь около { $seconds } с ({ $layers } сл. × { $heads } гол. на { $n_seq } × { $positions } поз., { $dtype }: около { $per_step } с на шаг), это больше предела в { $limit } с (max_train_seconds): { $at_most } ({ $advice })
error-train-more-sizes = больше шагов позволят меньшее число слоёв, голов или позиций
error-train-more-sizes-float32 = больше шагов позволят меньшее число слоёв, голов или позиций либо float32
error-train-more-text = больше шагов позволит текст короче
error-train-more-text-float32 = больше шагов позволят текст короче или float32
error-train-more-float32 = больше шагов позволит float32

## Предпросмотр текста реальной модели (app/spec/preview.py)

error-preview-past-seq-len = текст даёт { $positions } поз., это больше, чем seq_len = { $seq_len } модели { $model }
error-preview-takes = текст даёт { $positions } поз.; модель { $model } принимает { $most } поз. в { $dtype } при пределе трассы этого сервера в { $limit } МБ (max_trace_bytes)
error-preview-takes-none = текст даёт { $positions } поз.; модель { $model } не принимает ни одной позиции в { $dtype } при пределе трассы этого сервера в { $limit } МБ (max_trace_bytes)
error-preview-use-float32 = { $message }: выберите float32 (до { $most } поз.)
error-preview-shorter-text = { $message }: возьмите текст короче

## Лаборатория ошибок в спецификации (app/spec/faults.py)

error-quiz-with-faults = викторина прячет свою ошибку сама: пришлите faults = [] вместе с quiz или уберите quiz
error-quiz-with-layer = викторина прячет и слой своей ошибки: уберите fault_layer
error-fault-layer = fault_layer должно быть от 0 до { $last } (слоёв в модели: { $layers }), получено { $value }
error-unknown-fault = неизвестная ошибка { $fault }; их список даёт GET /api/faults: { $known }
error-fault-not-applicable = ошибка { $fault } неприменима к этой конфигурации (условие xt_core: { $reason })

## Запрос постоянной ссылки (app/spec/query.py)

error-query-field = { $field }: { $reason }
error-query-tokens = tokens должны быть целыми числами через запятую
error-query-unknown = неизвестный параметр { $key }
error-query-optimizer-field = { $field } — поле оптимизатора: добавьте optimizer=adamw или optimizer=sgd
error-query-not-number = { $field } должно быть числом, получено { $value }

## Загрузки (app/checkpoints/upload.py, app/checkpoints/registry.py)

error-upload-too-large = файл весит { $size } МБ, а загрузки ограничены { $limit } МБ (max_upload_bytes)
error-upload-not-multipart = пришлите контрольную точку как multipart/form-data с одним полем-файлом по имени 'file'
error-upload-truncated = тело multipart повреждено или обрезано (нет закрывающей границы)
error-upload-file-count = пришлите ровно один файл (поле 'file'), получено { $count }
error-upload-type = { $file } — не тот тип контрольной точки, который читает xt: пришлите одно из { $formats } (.pt из nanoGPT читается без выполнения запакованного в pickle кода; остальные файлы PyTorch .pth — это pickle, и они никогда не загружаются)
error-upload-empty = файл { $file } пуст
error-upload-expands = { $file } распаковывается в { $size } МБ, это больше { $limit } МБ
error-upload-disk-full = диск с папкой { $folder } заполнен ({ $reason }): ничего не сохранено. Тот, кто запустил сервер, может освободить там место.
error-upload-quota = этот сервер уже хранит { $stored } МБ загруженных моделей; эта ({ $size } МБ) превысила бы предел в { $limit } МБ (max_upload_store_bytes). Тот, кто запустил сервер, может удалить старые загрузки из { $folder }.
error-model-over-limit = у модели { $field } = { $value }, это больше предела этого сервера ({ $limit })
error-model-outside-range = у модели { $field } = { $value }, это вне диапазона этого сервера [{ $low }, { $high }]
error-model-params = у модели параметров: { $params }, а предел этого сервера — { $most }
error-upload-format = { $maker } { $suffixes }
error-upload-or = или
error-real-model-params = параметров: { $params }, это больше предела в { $most }
error-real-model-unknown-file = { $file }: это не файл модели, который читает xt
