# Скрипт страницы: клиент API, ответы статического экспорта, помощники графиков
# (static/js/lib/*.js).

js-api-status = сервер ответил { $status }
js-api-unreachable = не удаётся связаться с сервером ({ $error })
js-api-not-json = ответ сервера — не JSON
js-queue-waiting = Ожидание сервера: впереди { $ahead ->
        [one] { $ahead } трасса
        [few] { $ahead } трассы
       *[many] { $ahead } трасс
    } (около { $wait } с)…
js-queue-next = Следующая в очереди сервера (около { $wait } с)…
js-export-no-server = у статического экспорта нет сервера для { $what }: это вычисляет полное приложение — `make run` (или `xt serve`) в копии xt
js-export-not-here = этого вида нет в экспорте ({ $key }); его вычисляет полное приложение — `make run` (или `xt serve`) в копии xt
js-export-no-crypto = запечатанная викторина открывается через Web Crypto браузера, а он работает только по https://, http://localhost или file:// (защищённый контекст)
js-export-sealed-missing-probe = в этом экспорте нет пробы для шага { $step }
js-export-sealed-missing-answer = в этом экспорте нет ответа для шага { $step }
js-export-probes-spent = все ваши пробы этой викторины ({ $max }) потрачены (шаги { $used }); ответьте на неё
js-export-quiz-no = статическая викторина не отвечает на { $key }
js-stats-shape = форма
js-stats-min = мин.
js-stats-max = макс.
js-stats-mean = среднее
js-stats-std = ст. откл.
js-stats-label = числа всего тензора
js-download-table = Скачать числа (.json)
    .title = Таблица чисел этого графика: её строки, столбцы и значения
js-download-every = Скачать все значения:
js-bench-every-value = Все значения (страницы, переход, CSV)
js-scale-linear = линейная
js-scale-symmetric = симметричная относительно 0
js-scale-row = нормировка по строкам
js-scale-row-title = { $value } / max|{ $value }| строки
js-scale-drawn = на рисунке
js-scale-label = цветовая шкала
js-scale-control = Цветовая шкала
js-figure-numbers-of = { $caption }: числа
js-figure-numbers = Числа
js-figure-enlarge = Увеличить:
# Размер ошибки, который не измерен (ячейка таблицы, сравнение)
js-error-size-missing = н/д
