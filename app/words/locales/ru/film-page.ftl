# The film of a recorded run (templates/film.html, static/js/film.js; docs/film.md)
film-page-title = Обучение как фильм
film-page-lede = Записанный прогон «{ $run }»: { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    } обучения. Сверху — значение функции потерь, под ним — индукционная оценка и оценка предыдущего токена каждой головы на каждом шаге. Индукционная оценка головы — доля внимания, которую она отдаёт токену, шедшему после прежней копии текущего; оценка предыдущего токена — доля внимания на токен прямо перед текущим (обе измеряются на каждом шаге на одних и тех же повторённых случайных токенах).
film-page-scrub = Шаг
film-page-loading = Читаем прогон…
film-page-open = Открыть этот шаг в пошаговом разборе
film-page-help = Двигайтесь по прогону клавишами ← и → (на шаг), PageDown и PageUp (на двадцатую часть прогона вперёд или назад: подойдёт и кликер), Home и End или щёлкните по графику.
film-page-plot = Значение функции потерь и оценки всех голов по шагам прогона «{ $run }»; выбранный шаг отмечен вертикальной линией.
film-page-attention = Квадраты выше показывают пробную последовательность. Чтобы показать внимание головы на собственном батче шага, шаг нужно восстановить от контрольной точки прогона на этом шаге или перед ним: на контрольной точке сразу, иначе примерно секунда на каждые сто шагов после неё. Поэтому оно строится по запросу для шага, на котором стоит ползунок (его показывает и пошаговый разбор шага — в операции внимания нужного слоя).
film-page-attention-show = Показать внимание на этом шаге
film-page-choose = Выберите записанный прогон.
film-page-run = { $run } ({ $task }, { $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    })
film-page-none = На этом сервере пока нет записанных прогонов. Запишите прогон ниже или командой xt train --record RUN и откройте его через xt serve --runs DIR.
# The walk page of a run's step (templates/_training_bar.html, templates/_walk_summary.html)
film-walk-back = Вернуться к фильму на шаге { $step }
film-walk-trained = { $steps ->
        [0] первый шаг прогона: веса ещё начальные
        [one] до этого шага прогон обучался { $steps } шаг
        [few] до этого шага прогон обучался { $steps } шага
       *[many] до этого шага прогон обучался { $steps } шагов
    }
film-walk-fixed = Этот шаг взят из записанного прогона: обучение задано прогоном, дообучать здесь нечего.
# The film's figure and readout (static/js/film.js, static/js/film/figure.js)
js-film-loss = потери
# the score panels' axis titles: short, a panel is about 120 px tall (the readout names the scores in full)
js-film-induction = индукция
js-film-previous = пред. токен
js-film-step = шаг обучения
js-film-head = слой { $layer }, голова { $head }
js-film-readout = Шаг { $step }: потери { $loss }; лучшая индукционная оценка { $induction } (слой { $inductionLayer }, голова { $inductionHead }); лучшая оценка предыдущего токена { $previous } (слой { $previousLayer }, голова { $previousHead }).
js-film-readout-checkpoint = Шаг { $step } (контрольная точка: открывается сразу): потери { $loss }; лучшая индукционная оценка { $induction } (слой { $inductionLayer }, голова { $inductionHead }); лучшая оценка предыдущего токена { $previous } (слой { $previousLayer }, голова { $previousHead }).
js-film-attention-building = Восстанавливаем шаг { $step } ({ $replayed ->
        [0] это контрольная точка
        [one] от предыдущей контрольной точки повторяется { $replayed } шаг
        [few] от предыдущей контрольной точки повторяются { $replayed } шага
       *[many] от предыдущей контрольной точки повторяются { $replayed } шагов
    })…
js-film-attention-shown = Внимание всех голов на шаге { $step }, на первой последовательности батча этого шага.
js-film-failed = Прогон не удалось прочитать: { $error }
# The home page's way to the shipped run's film (templates/_home_ways.html)
film-home-way = Фильм обучения: пролистайте его шаг за шагом
