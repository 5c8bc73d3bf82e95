# Recorded training runs (app/films/runs.py, GET /api/runs/{name}; docs/film.md)
film-error-unknown-run = на этом сервере нет записанного прогона { $name } (есть прогоны: { $known })
film-error-unreadable-run = записанный прогон { $name } не читается: его файлы повреждены или больше заявленного для него предела
film-error-stride = чтобы показать шаги от { $start } до { $stop } (не включая { $stop }), stride должен быть не меньше { $least } (в один ответ помещается не больше { $most } { $most ->
        [one] шага
       *[other] шагов
    }), а получено { $value }
