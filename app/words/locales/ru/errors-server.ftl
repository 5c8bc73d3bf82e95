# Отказы маршрутов, охраны перед ними и занятий (app/routes/*, app/security.py, app/guesses.py,
# app/sessions/*), которые видит страница. errors.ftl — отказы спецификации.

## Сравнение трасс, лаборатория ошибок

error-compare-quiz = трассу викторины нельзя сравнивать: разность указала бы на её ошибку
error-compare-param = param относится только к шагу обновления
error-faults-unknown-parameter = неизвестный параметр { $key }: укажите поля model или config и fault_layer
error-faults-layer = fault_layer должно быть от 0 до { $last }, получено { $value }
error-quiz-sealed = викторина скрывает проверки всех шагов, пока вы не ответите (на занятии — пока ведущий не откроет ответ): можно проверить до { $probes } { $probes ->
        [one] шага
       *[other] шагов
    } (POST /api/traces/{ $trace_id }/quiz/probe)
error-quiz-of-a-class = эта викторина принадлежит занятию: ответьте в опросе класса, ошибку откроет ведущий
error-quiz-not-backward = шаг { $step } относится к фазе { $phase }: ошибка спрятана в шаге обратного прохода
error-not-a-quiz = трасса { $trace_id } — не викторина; начните викторину на /quiz
error-quiz-step-range = step должно быть от 0 до { $last } (шаги трассы), получено { $value }

## Уроки и занятия

error-unknown-lesson = неизвестный урок { $lesson }; их список даёт GET /api/lessons
error-lesson-other-spec = урок { $lesson } идёт по другой спецификации: пришлите его спецификацию
error-poll-no-bug = в разборе этого занятия нет спрятанной ошибки: начните занятие из лаборатории ошибок, чтобы опросить класс
error-poll-not-open = опрос не открыт: подождите, пока ведущий его откроет
error-sessions-full = на этом сервере уже открыто занятий: { $most } (max_sessions); занятие закрывается после { $idle } с без действий
error-session-codes-guessed = слишком много неизвестных кодов занятий с этого адреса (предел — { $most } в минуту); подождите минуту
error-no-session = занятия с кодом { $code } нет: оно закончилось или код набран с ошибкой
error-not-presenter = вести класс может только ведущий: заголовок X-Presenter-Key отсутствует или неверен
error-session-ended = занятие { $code } закончилось
error-poll-full = в этом опросе уже { $most } { $most ->
        [one] ответ
        [few] ответа
       *[many] ответов
    } (max_session_answers)
error-poll-address-full = с этого адреса уже ответили учащиеся: { $most } (session_answers_per_address)
error-voters-limited = этому адресу уже выдано удостоверений учащихся: { $most } за { $window } с (voters_per_address); сохраните cookie или присылайте X-Voter, который выдал сервер

## Подбор секрета (app/guesses.py): что подбирают (родительный падеж), затем два отказа

error-guess-keys = неверных ключей
error-guess-admin-keys = неверных ключей администратора
error-guesses-per-address = слишком много { $what } с этого адреса (предел — { $most } в минуту): подождите минуту

## Охрана перед всеми маршрутами (app/security.py)

error-admin-key-needed = загрузки, обучение и ведение занятий на этом сервере требуют ключа администратора: откройте в этом браузере один раз адрес, который напечатал `xt serve` (он кончается на ?key=...), или пришлите заголовок X-Admin-Key
error-admin-key-wrong = неверный ключ администратора: откройте ровно тот адрес, который напечатал `xt serve`
error-host = этот сервер отвечает на имена { $hosts } (разрешённые), а не { $host }: тот, кто его запустил, может добавить имя через `xt serve --allowed-host NAME`
error-query-too-long = строка запроса занимает { $size } Б, это больше предела в { $most } Б (max_query_bytes)
error-cross-site = запрос, меняющий состояние, должен приходить со страниц самого сервера, а пришёл с другого сайта (Origin / Sec-Fetch-Site)
error-body-too-large = тело запроса — { $size } Б или больше; этот сервер принимает не больше { $most } Б ({ $setting })

## Занятый сервер: причина, затем когда повторить

error-busy-retry = { $reason }; повторите примерно через { $seconds } с
error-busy-jobs-running = сервер занят (выполняется заданий: { $jobs })
error-busy-jobs-queued = сервер занят (заданий в очереди: { $jobs })
error-busy-client-queued = построений этого клиента уже ждут: { $builds } ({ $setting } = { $most })
error-busy-client-downloads = скачивания .npy этого клиента уже держат { $held } байт, а это добавит { $adds }: больше, чем { $setting } = { $most } байт
error-busy-queue-full = сервер занят: ждут { $builds } { $builds ->
        [one] построение
        [few] построения
       *[many] построений
    }, больше очередь не вмещает (max_queued_builds)
error-busy-queued-seconds = сервер занят: в очереди трассы примерно на { $queued } с, эта добавит около { $adds } с, это больше предела в { $most } с (max_queued_seconds)
