# Урок о записанном прогоне (app/lessons/run_claims.py, run_lesson.py; docs/lessons.md): его
# утверждения о прогоне, что измерено по прогону, и слова проигрывателя урока для его остановок.

lesson-against-run = прогону «{ $run }»
lesson-against-run-step = шагу { $step } прогона «{ $run }»
lesson-run-film-title = Запись обучения на шаге { $step }
lesson-run-no-heads = ни одной

lesson-run-claim-plateau = значение функции потерь (усреднённое по { $window } шагам) падает меньше чем на { FORMAT($fall, spec: ".3g") } за 100 шагов { $condition } шагов подряд до самого крутого спада
lesson-run-measured-plateau = с шага { $first } по шаг { $last }: { $length } { $length ->
        [one] шаг
        [few] шага
       *[many] шагов
    }
lesson-run-measured-plateau-none = такой участок не заканчивается до самого крутого спада (шаг { $steepest })
lesson-run-claim-loss = значение функции потерь, усреднённое по шагам с { $first } по { $last }, { $condition }
lesson-run-claim-crossing-induction = лучшая индукционная оценка слоя { $layer } впервые превышает { FORMAT($above, spec: ".3g") } на шаге { $condition }
lesson-run-claim-crossing-previous = лучшая оценка предыдущего токена слоя { $layer } впервые превышает { FORMAT($above, spec: ".3g") } на шаге { $condition }
lesson-run-measured-crossing = на шаге { $step } (голова { $head }, { FORMAT($score, spec: ".3g") })
lesson-run-measured-crossing-never = она ни разу его не превышает
lesson-run-claim-score-induction = индукционная оценка головы { $head } слоя { $layer } на шаге { $step } { $condition }
lesson-run-claim-score-previous = оценка предыдущего токена головы { $head } слоя { $layer } на шаге { $step } { $condition }
lesson-run-claim-heads-induction = на шаге { $step } индукционная оценка выше { FORMAT($above, spec: ".3g") } у таких голов слоя { $layer }: { $heads }
lesson-run-claim-heads-previous = на шаге { $step } оценка предыдущего токена выше { FORMAT($above, spec: ".3g") } у таких голов слоя { $layer }: { $heads }
lesson-run-measured-heads = измерено: { $heads }
lesson-run-claim-composition-summed = за { $ahead } { $ahead ->
        [one] шаг
        [few] шага
       *[many] шагов
    } начиная с шага { $step } часть градиента по { $weight } слоя { $layer }, которая читает выходы голов { $heads } слоя { $before }, составляет долю градиента { $condition }
lesson-run-claim-composition-summed-best = за { $ahead } { $ahead ->
        [one] шаг
        [few] шага
       *[many] шагов
    } начиная с шага { $step } часть градиента по { $weight } слоя { $layer }, которая читает выходы голов { $heads } слоя { $before }, составляет долю градиента { $condition } и направлена ближе к изменению { $weight }, чем часть любой другой головы
lesson-run-claim-composition-one-step = на шаге { $step } часть градиента по { $weight } слоя { $layer }, которая читает выходы голов { $heads } слоя { $before }, составляет долю градиента { $condition }
lesson-run-claim-composition-one-step-best = на шаге { $step } часть градиента по { $weight } слоя { $layer }, которая читает выходы голов { $heads } слоя { $before }, составляет долю градиента { $condition } и направлена ближе к изменению { $weight } за следующие { $ahead } шагов, чем часть любой другой головы
lesson-run-measured-composition = доля { FORMAT($share, spec: ".3g") }; косинус с изменением не меньше { FORMAT($cosine, spec: ".3g") }, у других голов не больше { FORMAT($others, spec: ".3g") }

lesson-run-no-class = урок { $lesson } посвящён записанному прогону: его остановки — на странице записи обучения и на страницах нескольких шагов, а этот класс следует за одним пошаговым разбором (откройте вместо него класс на записи обучения прогона: POST /api/sessions с run)

js-lesson-run-going = Открываем остановку { $stop }…
