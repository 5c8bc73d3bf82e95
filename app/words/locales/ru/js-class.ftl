# Скрипт страницы: класс (static/js/class/*.js): опрос, показ, следование за ведущим,
# проигрыватель уроков.

js-poll-not-known = пока неизвестно
js-poll-the-bug = Ошибка:
js-poll-broken-step = Сломанный шаг:
js-poll-first-failing = Первая непройденная проверка градиента:
js-poll-go-broken = Перейти к сломанному шагу
js-poll-column = шаг { $number }: { $title } — { $count } { $count ->
        [one] ответ
        [few] ответа
       *[many] ответов
    }
js-poll-caption = { $answers } { $answers ->
        [one] ответ
        [few] ответа
       *[many] ответов
    } · шаги обратного прохода, от функции потерь (слева) к эмбеддингу (справа)
js-poll-no-answers = Ответов пока нет.
js-poll-by-step = Ответы по шагам
js-poll-answered = : { $title } — { $count } { $count ->
        [one] ответ
        [few] ответа
       *[many] ответов
    }
js-poll-open = Открыть опрос: какой шаг сломан?
js-poll-close = Закрыть опрос
js-poll-reveal = Раскрыть ошибку
js-poll-status-open = Опрос открыт: ответы приходят вживую.
js-poll-status-revealed = Раскрыто на всех экранах.
js-poll-choice = Сломанный шаг
js-poll-pick = Выберите шаг…
js-poll-answer = Ответить
js-poll-pick-first = Сначала выберите шаг, который, по-вашему, сломан.
js-poll-your-answer = Ваш ответ: шаг { $number }. Его можно изменить, пока опрос не закрыт.
js-poll-question = Какой шаг сломан?
js-poll-question-help = Выберите шаг обратного прохода, где градиенты впервые становятся неверными.
js-poll-closed = Опрос закрыт.
js-poll-closed-answer = Опрос закрыт. Ваш ответ: шаг { $number }.
js-class-move-failed = Не удалось переместить класс: { $error }
js-class-following = следят: { $count }
js-class-keep = Продолжить показ
js-class-end-confirm = Завершить занятие на экранах всех студентов?
js-class-badge = Класс { $code }
js-class-show-code = Показать код
js-class-end = Завершить занятие
js-class-idle = Сессия завершилась (слишком долго без действий). Начните показ снова, чтобы открыть новую.
js-class-end-failed = Не удалось завершить занятие: { $error }
js-class-ended = Занятие { $code } завершено: страница каждого студента снова в его распоряжении.
js-follow-exploring = Самостоятельное изучение · класс { $code }
js-follow-following = Вы следуете за ведущим · класс { $code }
js-follow-cannot = Не удаётся следовать за классом { $code }: { $error }
js-follow-ended = Занятие завершено (класс { $code }): страница в вашем распоряжении.
js-follow-lost = Связь с классом { $code } потеряна: перезагрузите страницу, чтобы попробовать снова.
js-follow-back = Вернуться к ведущему
js-follow-detach = Изучать самостоятельно
js-follow-ended-notice = Занятие завершено (класс { $code }). Страница ваша: изучайте самостоятельно. ✕
js-lesson-claims = Проверено по трассе
js-lesson-prev = Назад
js-lesson-next = Далее
js-lesson-more = Ещё
js-lesson-play = ▶ Играть
js-lesson-pause = ❚❚ Пауза
js-lesson-pace = Секунд на шаг
js-lesson-pace-option = { $seconds } с на шаг
js-lesson-leave = Весь проход ✕
js-lesson-label = Урок: { $title }
js-lesson-claim = Проверено по { $against }: { $claimed }; { $measured }.
js-lesson-stop = · остановка { $stop } из { $stops }
js-lesson-next-stop = Далее: { $next }
js-lesson-off-path = Вы сошли с пути урока.
js-lesson-back = Вернуться к уроку
js-classroom-lesson = { $title } ({ $steps } { $steps ->
        [one] шаг
        [few] шага
       *[many] шагов
    })
js-classroom-no-lesson = нет: весь проход
js-classroom-others = другие модели и тексты
js-classroom-session-failed = Не удалось открыть сессию: { $error }
js-classroom-failed = Инструменты класса не запустились: { $error }
js-poll-by-address = Ответы по адресам (класс за одним роутером — один адрес):
js-poll-address = { $address } — { $count } { $count ->
        [one] ответ
        [few] ответа
       *[many] ответов
    }
