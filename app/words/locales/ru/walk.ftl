# Рамка страницы пошагового прохода, какой её пишет сервер (templates/walk.html и её части).
# Виды шагов, объяснения и то, что пишет static/js/walk, пока не переведены.

walk-title = По шагам
walk-edit = Сменить модель или текст
walk-context-more = Токены, уроки, класс
    .title = Токены, обучение, проверка градиента на каждом шаге, уроки и показ классу
walk-controls = Переход по шагам
walk-prev = Назад
walk-slider = Шаг
walk-next = Вперёд
walk-details = Подробности
walk-present = Показ
    .title = Режим показа (P; Esc — выход): шаг на весь экран. ? — список всех клавиш
walk-jump = Перейти к
walk-jump-group = Перейти к слою
walk-jump-op = Перейти к операции
walk-sequence = Последовательность
walk-timeline = Все шаги: прямой проход, функция потерь, обратный проход, по слоям
walk-diagram = Схема модели
walk-diagram-current = Модель:
walk-loading = Выполняется шаг обучения…
walk-noscript = Эта страница рисует графики на JavaScript; включите его, пожалуйста.

## Что трассируется (templates/_walk_summary.html)

walk-summary = Что трассируется
walk-summary-model = модель
walk-summary-checkpoint = { $model } (контрольная точка)
walk-summary-random = случайная инициализация, зерно { $seed }
walk-summary-loss = потери
walk-summary-sizes = размеры
walk-summary-config = { $layers } { $layers ->
        [one] слой
        [few] слоя
       *[many] слоёв
    }, голов: { $heads } ({ $kv_heads } kv), C = { $width }, FFN { $ffn }, V = { $vocab }
walk-summary-tokens = токены
walk-summary-ids = номера
walk-summary-strip = Входные и целевые токены

## Обучение (templates/_training_bar.html)

walk-training = Обучение
walk-update-step = <strong>Шаг обновления:</strong> { $optimizer }
walk-no-update-step = <strong>Без шага обновления:</strong> только прямой и обратный проход.
walk-trained = сначала { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    } обучения на этом батче
walk-untrained = без обучения перед этим шагом
walk-train-more = Обучить ещё { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    }
walk-train-reset = Назад к 0 шагов
walk-float64 = Показать в float64
    .title = Обученная модель уверена в своих целях: тогда в градиентах float32 остаётся лишь несколько цифр (p − onehot при p около 1). Проверки в любом случае идут в float64; здесь на экране будут точные градиенты.
walk-train-most = не больше { $steps } { $steps ->
        [one] шага
       *[other] шагов
    } обучения
walk-train-none = обучения нет: даже один шаг занял бы больше времени, чем позволяет сервер
walk-diverged = Числа разошлись.
walk-enlarge-head = Голова
walk-enlarge-close = Закрыть ✕

## Панель класса (templates/_class.html)

class-bar = Класс
class-lesson = Урок
class-lesson-none = нет: весь проход целиком
class-present = Показать классу
    .title = Открыть сессию: ученики входят по коду или QR-коду и следят за этой страницей
class-poll = Охота на ошибку: какой шаг сломан?
class-dialog = Войти в класс
class-qr = QR-код адреса для входа
class-hint-open = Отсканируйте код или откройте
class-hint-type = и введите
class-loopback = Этот адрес работает только на этом компьютере: телефоны и ноутбуки учеников его не откроют. Остановите сервер и запустите его командой <code>xt serve --host 0.0.0.0</code>, затем откройте эту страницу по адресу, который он напечатает.
class-dialog-start = Начать

## Лаборатория ошибок на странице прохода (templates/_buglab_panel.html)

buglab-panel = Лаборатория ошибок
buglab-planted = Лаборатория ошибок: в этот обратный проход внесена ошибка
buglab-planted-in = в шаге
buglab-line-correct = верно
buglab-line-faulty = с ошибкой
buglab-loss-unchanged = Функция потерь не изменилась; каждый градиент, которого касается ошибка, — изменился.
buglab-correct-link = Тот же шаг без ошибки
buglab-quiz-link = Викторина: спрятать случайную ошибку
buglab-quiz = Викторина: в обратном проходе одной операции есть ошибка
buglab-quiz-how = Прямой проход и функция потерь верны; одна операция неверно считает свой градиент. Найдите, где градиенты <em>впервые</em> становятся неверными, как искали бы настоящую ошибку: читайте числа, сравнивайте шаг обратного прохода с верным обратным проходом и потратьте до { $probes } { $probes ->
        [one] пробы
       *[other] проб
    }, каждая из которых запускает проверку градиента одного шага. Все вердикты скрыты, пока вы не ответите. На сломанном шаге нажмите <strong>Этот шаг сломан</strong>.
buglab-new-quiz = Новая викторина
buglab-checks = Проверка градиента на каждом шаге
buglab-checks-open = — откройте, чтобы запустить
buglab-checks-help = Наибольшая относительная ошибка проверки каждого шага, логарифмическая шкала; щёлкните по столбику, чтобы перейти к его шагу.
buglab-checks-all-pass = Все столбики ниже пунктирной линии допуска: написанный вручную обратный проход согласуется с конечными разностями.
buglab-checks-first-failing = Шаг обратного прохода проверяет только то, что добавляет его собственная операция, шаг прямого прохода — весь dL/d(его выход): поэтому первый не прошедший проверку шаг обратного прохода и есть сломанная операция, а сбои расходятся от неё ко всему, что она питает.
