# Recorded training runs (app/films/runs.py, GET /api/runs/{name}; docs/film.md)
film-error-unknown-run = на этом сервере нет записанного прогона { $name } (есть прогоны: { $known })
film-error-unreadable-run = записанный прогон { $name } не читается: его файлы повреждены или больше заявленного для него предела
film-error-stride = чтобы показать шаги от { $start } до { $stop } (не включая { $stop }), stride должен быть не меньше { $least } (в один ответ помещается не больше { $most } { $most ->
        [one] шага
       *[other] шагов
    }), а получено { $value }
# A recorded run's step as a spec (app/spec/run_step.py: {"run": NAME, "run_step": s})
film-error-run-alone = { $field } нельзя менять вместе с run: шаг записанного прогона задаётся только полями run и run_step (прогон сам определяет модель, веса, батч и оптимизатор)
film-error-run-changed = прогон «{ $run }» записали заново после того, как открыли эту страницу: на шаге { $step } теперь другие веса (откройте его из прогона ещё раз)
film-error-run-missing = для run_step нужен run — имя записанного прогона (GET /api/runs)
film-error-run-step-missing = для run нужен run_step — номер открываемого шага, от 0 до { $last }
# The walk page's summary of a run's step (templates/_walk_summary.html)
film-summary-run = шаг { $step } записанного прогона «{ $run }»
