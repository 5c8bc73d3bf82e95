# Слова записанных тензоров, структуры прохода и осей (xt_core/names.py хранит только структуру;
# их читают app/steps/titles.py и app/steps/axes.py). Сообщения тензора названы по идентификатору
# слов его строки (xt_core/recorded.py): -title (что вычисляет операция), -label (что он хранит;
# $layer — номер слоя), -about (что о нём говорит объяснение).

## Записанные тензоры (xt_core/families/llama_names.py)

names-embedding-title = Выбор эмбеддингов токенов
names-embedding-label = эмбеддинги токенов
names-attention-norm-out-title = RMSNorm перед вниманием
names-attention-norm-out-label = выход RMSNorm слоя { $layer } перед вниманием
names-attention-norm-out-about = внимание
names-attention-q-title = Проекция запросов q = n·Wq
names-attention-q-label = запросы слоя { $layer }
names-attention-q-about = запросы: что ищет каждая позиция
names-attention-k-title = Проекция ключей k = n·Wk
names-attention-k-label = ключи слоя { $layer }
names-attention-k-about = ключи: то, по чему каждую позицию можно найти
names-attention-v-title = Проекция значений v = n·Wv
names-attention-v-label = значения слоя { $layer }
names-attention-v-about = значения: что каждая позиция передаёт дальше, когда на неё смотрит внимание
names-attention-q-biased-title = Смещение запросов q + bq (Qwen2)
names-attention-q-biased-label = запросы слоя { $layer } со смещением
names-attention-k-biased-title = Смещение ключей k + bk (Qwen2)
names-attention-k-biased-label = ключи слоя { $layer } со смещением
names-attention-v-biased-title = Смещение значений v + bv (Qwen2)
names-attention-v-biased-label = значения слоя { $layer } со смещением
names-attention-q-norm-out-title = QK-нормировка: RMSNorm каждой головы запросов (Qwen3)
names-attention-q-norm-out-label = запросы слоя { $layer }, каждая голова нормирована по RMS, до RoPE
names-attention-k-norm-out-title = QK-нормировка: RMSNorm каждой головы ключей (Qwen3)
names-attention-k-norm-out-label = ключи слоя { $layer }, каждая голова нормирована по RMS, до RoPE
names-attention-q-rot-title = RoPE поворачивает запросы
names-attention-q-rot-label = запросы слоя { $layer } после RoPE
names-attention-k-rot-title = RoPE поворачивает ключи
names-attention-k-rot-label = ключи слоя { $layer } после RoPE
names-attention-scores-title = Оценки внимания q̃·k̃ᵀ/√hd, каузальная маска
names-attention-scores-label = оценки внимания слоя { $layer }, все головы
names-attention-probs-title = Софтмакс внимания по ключам
names-attention-probs-label = вероятности внимания слоя { $layer }, все головы
names-attention-heads-title = Взвешенная сумма значений в каждой голове
names-attention-heads-label = выходы голов внимания слоя { $layer }, все головы
names-attention-concat-title = Конкатенация голов
names-attention-concat-label = головы слоя { $layer }, выложенные в ряд
names-attention-out-title = Выходная проекция внимания ·Wo
names-attention-out-label = выход внимания слоя { $layer }
names-attention-out-about = выход внимания: склеенные головы, снова смешанные в остаточный поток ширины C
names-attention-residual-title = Остаточная связь h = x + выход внимания
names-attention-residual-label = остаточный поток после внимания слоя { $layer }
names-ffn-norm-out-title = RMSNorm перед полносвязным блоком
names-ffn-norm-out-label = выход RMSNorm слоя { $layer } перед полносвязным блоком
names-ffn-norm-out-about = полносвязный блок
names-feed-forward-gate-title = Проекция затвора ·W1
names-feed-forward-gate-label = проекция затвора слоя { $layer }
names-feed-forward-gate-about = предактивация затвора a, которая проходит через silu
names-feed-forward-up-title = Повышающая проекция ·W3
names-feed-forward-up-label = повышающая проекция слоя { $layer }
names-feed-forward-up-about = повышающая проекция u, которую затвор будет масштабировать
names-feed-forward-swiglu-title = SwiGLU: silu(a) ⊙ u
names-feed-forward-swiglu-label = активация SwiGLU слоя { $layer }
names-feed-forward-out-title = Понижающая проекция ·W2
names-feed-forward-out-label = выход полносвязного блока слоя { $layer }
names-feed-forward-out-about = выход полносвязного блока: скрытый вектор ширины F, спроецированный обратно в C признаков
names-ffn-residual-title = Остаточная связь x′ = h + выход полносвязного блока
names-ffn-residual-label = остаточный поток после слоя { $layer }
names-norm-out-title = Финальный RMSNorm
names-norm-out-label = выход финального RMSNorm
names-norm-out-about = LM-голова
names-logits-title = Логиты: LM-голова
names-logits-label = логиты следующего токена
names-output-probs-title = Выходной софтмакс: вероятности следующего токена
names-output-probs-label = вероятности следующего токена
names-token-loss-title = Потеря на каждой позиции −log p(цели)
names-token-loss-label = потеря на каждой позиции
names-loss-title = Средняя потеря по всем позициям
names-loss-label = средняя потеря L

## Записанные тензоры GPT-2 (xt_core/families/gpt2_names.py): те, что названы иначе, чем у Llama

names-gpt2-embedding-positions-title = Прибавление обучаемых позиционных эмбеддингов
names-gpt2-embedding-positions-label = эмбеддинги токенов + позиционные эмбеддинги
names-gpt2-attention-norm-out-title = Нормализация слоя (LayerNorm) перед вниманием
names-gpt2-attention-norm-out-label = выход LayerNorm слоя { $layer } перед вниманием
names-gpt2-attention-norm-out-about = внимание
names-gpt2-attention-q-title = Проекция запросов q = n·Wq + bq
names-gpt2-attention-q-label = запросы слоя { $layer }
names-gpt2-attention-q-about = запросы: что ищет каждая позиция
names-gpt2-attention-k-title = Проекция ключей k = n·Wk + bk
names-gpt2-attention-k-label = ключи слоя { $layer }
names-gpt2-attention-k-about = ключи: то, по чему каждую позицию можно найти
names-gpt2-attention-v-title = Проекция значений v = n·Wv + bv
names-gpt2-attention-v-label = значения слоя { $layer }
names-gpt2-attention-v-about = значения: что каждая позиция передаёт дальше, когда на неё смотрит внимание
names-gpt2-attention-scores-title = Оценки внимания q·kᵀ/√hd, каузальная маска
names-gpt2-attention-scores-label = оценки внимания слоя { $layer }, все головы
names-gpt2-attention-out-title = Выходная проекция внимания ·Wo + bo
names-gpt2-attention-out-label = выход внимания слоя { $layer }
names-gpt2-attention-out-about = выход внимания: склеенные головы, снова смешанные в остаточный поток ширины C
names-gpt2-ffn-norm-out-title = Нормализация слоя (LayerNorm) перед полносвязным блоком
names-gpt2-ffn-norm-out-label = выход LayerNorm слоя { $layer } перед полносвязным блоком
names-gpt2-ffn-norm-out-about = полносвязный блок
names-gpt2-feed-forward-up-title = Повышающая проекция ·W1 + b1
names-gpt2-feed-forward-up-label = повышающая проекция слоя { $layer }
names-gpt2-feed-forward-up-about = повышающая проекция a, которая проходит через GELU
names-gpt2-feed-forward-gelu-title = Активация GELU
names-gpt2-feed-forward-gelu-label = активация GELU слоя { $layer }
names-gpt2-feed-forward-out-title = Понижающая проекция ·W2 + b2
names-gpt2-feed-forward-out-label = выход полносвязного блока слоя { $layer }
names-gpt2-feed-forward-out-about = выход полносвязного блока: скрытый вектор ширины F, спроецированный обратно в C признаков
names-gpt2-norm-out-title = Финальная нормализация слоя (LayerNorm)
names-gpt2-norm-out-label = выход финального LayerNorm
names-gpt2-norm-out-about = LM-голова

## Trace.names() (xt_core/listing.py): заголовок имени, которое не записывает ни одна операция

names-listed-token-ids = идентификаторы токенов
names-listed-parameter = параметр

## Параметры и идентификаторы токенов (app/steps/titles.py)

names-param-tokens-label = идентификаторы входных токенов
names-param-targets-label = идентификаторы целевых токенов
names-param-tok-embeddings-label = матрица эмбеддингов токенов
names-param-attention-norm-label = масштаб RMSNorm перед вниманием слоя { $layer }
names-param-attention-wq-label = веса запросов Wq слоя { $layer }
names-param-attention-wk-label = веса ключей Wk слоя { $layer }
names-param-attention-wv-label = веса значений Wv слоя { $layer }
names-param-attention-wo-label = выходные веса внимания Wo слоя { $layer }
names-param-attention-bq-label = смещение запросов bq слоя { $layer }
names-param-attention-bk-label = смещение ключей bk слоя { $layer }
names-param-attention-bv-label = смещение значений bv слоя { $layer }
names-param-attention-q-norm-label = коэффициент QK-нормировки запросов слоя { $layer }
names-param-attention-k-norm-label = коэффициент QK-нормировки ключей слоя { $layer }
names-param-ffn-norm-label = масштаб RMSNorm перед полносвязным блоком слоя { $layer }
names-param-feed-forward-w1-label = веса затвора W1 слоя { $layer }
names-param-feed-forward-w3-label = повышающие веса W3 слоя { $layer }
names-param-feed-forward-w2-label = понижающие веса W2 слоя { $layer }
names-param-norm-label = масштаб финального RMSNorm
names-param-output-label = веса LM-головы
names-param-pos-embeddings-label = матрица позиционных эмбеддингов
names-param-attention-norm-bias-label = смещение LayerNorm перед вниманием слоя { $layer }
names-param-attention-bo-label = выходное смещение внимания bo слоя { $layer }
names-param-ffn-norm-bias-label = смещение LayerNorm перед полносвязным блоком слоя { $layer }
names-param-feed-forward-b1-label = повышающее смещение b1 слоя { $layer }
names-param-feed-forward-b2-label = понижающее смещение b2 слоя { $layer }
names-param-norm-bias-label = смещение финального LayerNorm
names-param-gpt2-attention-norm-label = масштаб LayerNorm перед вниманием слоя { $layer }
names-param-gpt2-ffn-norm-label = масштаб LayerNorm перед полносвязным блоком слоя { $layer }
names-param-gpt2-feed-forward-w1-label = повышающие веса W1 слоя { $layer }
names-param-gpt2-norm-label = масштаб финального LayerNorm

## Схема модели и группы шкалы шагов

names-block-embedding = Эмбеддинг токенов
names-block-attention = Слой { $layer } · внимание
names-block-ffn = Слой { $layer } · полносвязный блок
names-block-norm = Финальный RMSNorm
names-block-embedding-positions = Эмбеддинги токенов и позиций
names-block-norm-layernorm = Финальный LayerNorm
names-block-head = LM-голова (логиты)
names-block-loss = Софтмакс и перекрёстная энтропия
names-block-update = Шаг оптимизатора
names-group-embedding = Эмбеддинг
names-group-layer = Слой { $layer }
names-group-output = Выход и функция потерь

## Заголовок шага и заголовки его рисунков

names-step = { $op }
names-step-backward = { $op } — обратный проход
names-step-layer = Слой { $layer } · { $op }
names-step-layer-backward = Слой { $layer } · { $op } — обратный проход
names-update-title = Обновление параметров: один шаг { $optimizer }
names-heads-all = все головы
names-heads-one = голова { $head }
names-title-one-head = { $title } — голова { $head }
names-input-title = Вход: { $label }
names-input-param-title = Вход: { $label } (параметр)
names-arriving-title = Градиент, пришедший к выходу «{ $label }»
names-contribution-param-title = Градиент весов от этой операции: { $label }
names-contribution-title = Вклад этой операции в градиент тензора «{ $label }»

## Оси (app/steps/axes.py): их подписи и какие токены большого словаря показаны

names-axis-input-feature = входной признак
names-axis-output-feature = выходной признак
names-axis-token = токен
names-axis-feature = признак
names-axis-position = позиция
names-axis-query = запрос
names-axis-key = ключ
names-axis-columns-gradient-note = Показано токенов: { $shown } из { $total }. Сначала целевые токены этой последовательности ({ $targets }), затем токены с наибольшим |градиентом| хотя бы в одной позиции. Остальные столбцы ({ $rest }) не показаны.
names-axis-columns-probability-note = Показано токенов: { $shown } из { $total }. Сначала целевые токены этой последовательности ({ $targets }), затем токены с наибольшей вероятностью хотя бы в одной позиции. Остальные столбцы ({ $rest }) не показаны.
names-axis-reads-lookup = Выбор эмбеддингов читает только строки входных токенов.
names-axis-reads-head = LM-голова читает каждую строку: каждая строка оценивает свой токен в каждой позиции.
names-axis-reads-both = Выбор эмбеддингов читает только строки входных токенов; LM-голова, связанная с этой таблицей, читает каждую строку: каждая строка оценивает свой токен в каждой позиции.
names-axis-rows-note = Показано строк: { $shown } из { $total }, это различные входные токены пакета ({ $inputs }). { $reads }
names-axis-rows-more-note = Показано строк: { $shown } из { $total }: различные входные токены пакета ({ $inputs }), затем ещё его целевые токены ({ $more }). { $reads }
names-axis-lookup-rows-note = Показаны ненулевые строки ({ $shown }), строки токенов, которые выбрал этот шаг; остальные строки словаря ({ $rest } из { $total }) в точности равны нулю.
names-axis-gradient-rows-note = Показано строк: { $shown } из { $total }. Сначала токены и цели пакета, затем строки с наибольшим |градиентом|. Ненулевых строк: { $nonzero }; не показанные строки опущены.
names-axis-gradient-rows-zero-note = Показано строк: { $shown } из { $total }. Сначала токены и цели пакета, затем строки с наибольшим |градиентом|. Ненулевых строк: { $nonzero }, остальные ({ $zero }) в точности равны нулю; не показанные строки опущены.

## Элементы записанного тензора на цветовой шкале, оси значений и во всплывающей подсказке
## (app/steps/axes.py value_name): символы формул шага (docs/notation.md), а не английские слова

names-value-q-rot = q̃
names-value-k-rot = k̃
names-value-scores = S
names-value-heads = o
names-value-concat = o
names-value-attention = attn
names-value-gate = a
names-value-up = u
names-value-swiglu = s
names-value-gelu = gelu
names-value-feed-forward = ffn
names-value-logit = z
names-value-loss = L
names-index-sequence = последовательность { $index }
