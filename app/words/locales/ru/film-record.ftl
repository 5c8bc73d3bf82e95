# A run recorded from the page (POST /api/runs: app/recording/limits.py, app/recording/recordings.py;
# templates/_film_record.html, static/js/film/record.js; docs/film.md, "Recording from the page")
film-record-error-task = task должно быть одной из демонстрационных задач ({ $known }), получено { $value }
film-record-error-steps = steps должно быть от 1 до { $most } (max_record_steps: больше страница записать не может), получено { $value }
film-record-error-seconds = steps = { $value }: такая запись задачи { $task } оценивается в { $seconds } с работы, больше max_record_seconds = { $most } с; наибольшее число шагов этой задачи: { $steps }
film-record-error-bytes = прогон занял бы на диске до { $need } байт, больше max_record_bytes = { $most }: сохраните меньше контрольных точек (every больше) или запишите меньше шагов
film-record-error-yours = { $most ->
        [one] у вас уже идёт запись (max_recordings_per_client = { $most }): дождитесь её конца
       *[other] у вас уже идут записи, сколько можно одному клиенту (max_recordings_per_client = { $most }): дождитесь конца одной из них
    }
film-record-error-busy = { $most ->
        [one] сервер записывает один прогон за раз (max_recordings = { $most }) и сейчас записывает: повторите через { $seconds } с
       *[other] сервер уже записывает столько прогонов сразу, сколько может (max_recordings = { $most }): повторите через { $seconds } с
    }
film-record-error-full = число и объём прогонов, записанных со страницы, ограничены (max_recorded_runs = { $runs }, max_recorded_bytes), а те, что пришлось бы удалить, ещё совсем новые (min_recorded_run_seconds): повторите через { $seconds } с
film-record-error-failed = запись прогона { $name } не удалась или была остановлена; от неё ничего не сохранено
film-record-title = Записать прогон обучения
film-record-help = Сервер обучает модель демонстрационной задачи с первого шага и записывает каждый шаг (значение функции потерь, нормы градиентов, оценки всех голов), как это делает xt train --record, а затем открывает его фильм. Он обучает по очереди с запросами всех остальных, поэтому длинный прогон занимает несколько минут. Наибольшее число шагов: { $steps }; сервер хранит последние прогоны, записанные здесь (их не больше { $runs }), и удаляет сначала самые старые.
film-record-task = Задача
film-record-task-induction = induction: повторяющиеся случайные буквы (образуется индукционная голова)
film-record-task-text = text: предложения корпуса, буква за буквой
film-record-task-gpt2-text = gpt2-text: те же предложения, модель в стиле GPT-2
film-record-steps = Шагов обучения
film-record-start = Записать
film-record-bar = Ход записи
js-film-record-queued = Запись { $name } начата: ждём своей очереди на сервере…
js-film-record-waiting = Записано шагов: { $done } из { $total }: ждём своей очереди ({ $ahead ->
        [0] следующая
        [one] перед ней { $ahead } сборка
        [few] перед ней { $ahead } сборки
       *[many] перед ней { $ahead } сборок
    })…
js-film-record-progress = Записано шагов: { $done } из { $total }, значение функции потерь { $loss }, { $seconds } с
js-film-record-finishing = Все шаги ({ $total }) обучены: добавляем контрольные точки там, где значение функции потерь падало быстрее всего…
js-film-record-done = Прогон { $name } записан: открываем его фильм…
js-film-record-failed = Запись не удалась: { $error }
