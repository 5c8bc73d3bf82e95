# Отказы маршрутов трасс, шагов, тензоров и занятий, которые видит страница (4xx `msg` или `detail`,
# и ответы 503 «сервер занят», к которым они ведут). Значения — код (id, имена полей, тензоров
# и фаз) или то, что прислал клиент, в кавычках как есть; `loc` и `type` не меняются.

## Почему число вне диапазона (значение `why` сообщения error-out-of-range)

error-why-trace-sequences = в трассе { $count } { $count ->
        [one] последовательность
        [few] последовательности
        [many] последовательностей
       *[other] последовательности
    }
error-why-trace-positions = в трассе { $count } { $count ->
        [one] позиция
        [few] позиции
        [many] позиций
       *[other] позиции
    }
error-why-model-heads = у модели { $count } { $count ->
        [one] голова внимания
        [few] головы внимания
        [many] голов внимания
       *[other] головы внимания
    }
error-why-model-layers = у модели { $count } { $count ->
        [one] слой
        [few] слоя
        [many] слоёв
       *[other] слоя
    }
error-why-the-model-layers = слои модели
error-why-the-model-heads = головы внимания модели
error-why-the-trace-positions = позиции трассы
error-why-the-trace-steps = шаги трассы
error-why-lesson-steps = шаги урока { $lesson }
error-why-the-run-steps = шаги прогона «{ $run }»

## Трасса и её шаги

error-unknown-trace = неизвестный id трассы { $trace }; отправьте её спецификацию в /api/traces ещё раз (POST)
error-client-gone = клиент закрыл соединение; его задание отменено
error-busy-evicted = трасса { $trace } { $times } { $times ->
        [one] раз
        [few] раза
        [many] раз
       *[other] раза
    } вытеснялась из памяти, пока этот запрос её ждал
error-step-out-of-range = шага { $index } нет: в этой трассе шаги от 0 до { $last }
error-no-head-grid = шаг { $index } ({ $name }) не показывает сетку голов внимания
error-not-a-head-grid = figure должно быть одной из сеток голов внимания этого шага { $grids }, получено { $value }
error-diff-costs-probe = сравнение шага { $index } с верным обратным проходом стоит одной проверки: сначала POST { $path } { $body } или ответьте на викторину
error-diff-no-fault = трасса { $trace } считает обратный проход без ошибок: сравнивать не с чем
error-diff-not-backward = шаг { $index } относится к фазе { $phase }: ошибки меняют только шаги обратного прохода
error-no-update-step = в трассе { $trace } нет шага обновления: её спецификация не задаёт оптимизатор
error-no-parameter = параметра { $name } нет; параметры этой модели: { $names }
error-top-k-between = top_k должно быть от 1 до { $most }, получено { $value }
error-layer-integer = layer должно быть целым числом или "output", получено { $value }

## Записанный тензор и его страница

# `reason` — отказ xt_core (app/spec/core_words.py читает эти три в каталог)
error-core-no-tensor = записанного тензора { $name } нет
error-core-no-tensor-close = записанного тензора { $name } нет; может быть, вы имели в виду { $close }?
error-core-token-ids-no-grad = { $name } — целочисленные id токенов: градиента у них нет
error-tensor-unknown = { $reason } (трасса { $trace }); тензоры, которые шаг читает и пишет, перечислены в его `shapes`
error-tensor-unknown-short = { $reason } (трасса { $trace })
error-tensor-too-big-for-json = в тензоре { $name } элементов: { $entries } ({ $shape }), это больше предела в { $most }, который этот сервер отдаёт в JSON (max_json_tensor_entries); запросите format=npy (по умолчанию): файл .npy размером { $bytes } байт, его читает numpy.load
error-slice-form = { $field } должно иметь вид "start:stop" (целые числа), получено { $value }
error-slice-bounds = для { $field } должно выполняться 0 <= start < stop <= { $size }, получено { $value }
error-slice-too-long = { $field } охватывает { $span }, больше предела { $most } ({ $setting })
error-at-integers = at должно быть целыми числами через запятую, получено { $value }
error-at-count = для тензора формы { $shape } at должно задать { $count } { $count ->
        [one] индекс
        [few] индекса
        [many] индексов
       *[other] индекса
    }, получено { $given }
error-at-between = at[{ $axis }] должно быть от 0 до { $last }, получено { $value }
error-no-token = токена { $token } нет { $where } ({ $axes })
error-along-rows = в строках
error-along-cols = в столбцах
error-along-token-axes = на осях токенов
error-scalar-no-rows = { $name } — скаляр: у него нет строк, которые можно листать

## Сравнение двух трасс

error-misaligned = шаги трассы { $b } не совпадают с шагами трассы { $a }: { $differences }
error-more-differences = и ещё { $count }
error-differs-config = config.{ $key }: { $a } в a, { $b } в b
error-differs-batch = батч: { $a_seq } × { $a_positions } позиций в a, { $b_seq } × { $b_positions } в b
error-differs-steps = шаги: { $a } в a, { $b } в b
error-differs-steps-update = шаги: { $a } в a, { $b } в b (a { $a_update }, b { $b_update })
error-has-update = с шагом обновления
error-has-no-update = без шага обновления
error-differs-step = шаг { $index }: { $a_phase } { $a_name } в a, { $b_phase } { $b_name } в b

## Занятие

error-step-null = step не может быть null: класс всегда стоит на каком-то шаге
error-session-lesson-other-spec = урок { $lesson } идёт по другой спецификации, чем это занятие
error-lesson-step-no-lesson = для lesson_step нужен урок, а это занятие урок не проводит
error-class-spec-or-run = класс следует либо за пошаговым разбором (spec), либо за записью обучения (run): укажите одно из двух
error-film-class-on-film = для { $field } нужен пошаговый разбор, а класс сейчас смотрит запись обучения (сначала откройте один из шагов прогона через run_step)
error-film-class-no-film = { $field } — поле класса на записи обучения, а этот класс следует за пошаговым разбором
error-film-class-lesson = урок { $lesson } не о прогоне «{ $run }», за записью которого следует этот класс
error-film-step-null = film_step не может быть null: запись всегда стоит на каком-то шаге
error-answer-not-backward = шаг { $step } — не шаг обратного прохода: ошибка в одном из шагов с { $first } по { $last }
error-no-lesson = урока с именем { $lesson } нет; список уроков — GET /api/lessons
error-no-lesson-short = урока с именем { $lesson } нет
